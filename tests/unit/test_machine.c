/* tests/unit/test_machine.c: the machine probe (solver/machine.c).
 *
 * On the running machine: the probe is sane (1 <= usable <= cores <= pus),
 * cached, thread counts are capped, and binding either works or says it is
 * unsupported. On strings: the cgroup quota parsers and the usable-cores
 * rule, so that container limits are tested without a container. */
#define _GNU_SOURCE /* pthread_getaffinity_np */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "../support/leak.h"
#include "machine_internal.h"
#include "rackfit/machine.h"

Test(machine, probe_is_sane_and_cached)
{
    const rf_machine_t *m = rf_machine();
    cr_assert_not_null(m);
    cr_assert_geq(m->usable, 1);
    cr_assert_geq(m->cores, 1);
    cr_assert_geq(m->pus, m->cores, "pus %d < cores %d", m->pus, m->cores);
    cr_assert_leq(m->usable, m->cores);
    cr_assert_leq(m->usable, m->pus);
    cr_assert_geq(m->quota_cpus, 0.0);
    if (m->quota_cpus > 0)
        cr_assert_leq((double)m->usable, m->quota_cpus + 1.0 - 1e-9);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0)
        cr_assert_leq(m->pus, online, "pus %d > online %ld", m->pus, online);
    cr_assert_eq(rf_machine(), m, "the probe is cached");
    cr_log_info("machine: cores %d, pus %d, quota %.2f, usable %d", m->cores, m->pus, m->quota_cpus, m->usable);
    rf_test_no_leaks();
}

Test(machine, threads_are_capped)
{
    int32_t usable = rf_machine()->usable;
    cr_assert_eq(rf_machine_threads(0), usable);
    cr_assert_eq(rf_machine_threads(-3), usable);
    cr_assert_eq(rf_machine_threads(1), 1);
    cr_assert_eq(rf_machine_threads(usable), usable);
    cr_assert_eq(rf_machine_threads(usable + 1), usable);
    cr_assert_eq(rf_machine_threads(100000), usable);
    rf_test_no_leaks();
}

static void *s_bind_worker(void *arg)
{
    int32_t index = *(int32_t *)arg;
    rf_status *rc = malloc(sizeof *rc);
    *rc = rf_machine_bind_thread(index);
    return rc;
}

Test(machine, binding_works_or_is_unsupported)
{
    int32_t indices[] = {0, 1, 7, -1, 1000};
    int ok = 0;
    for (size_t i = 0; i < sizeof indices / sizeof indices[0]; i++) {
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, s_bind_worker, &indices[i]), 0);
        void *res = NULL;
        cr_assert_eq(pthread_join(t, &res), 0);
        rf_status rc = *(rf_status *)res;
        free(res);
        cr_assert(rc == RF_OK || rc == RF_EUNSUPPORTED, "bind(%d): %s", indices[i], rf_status_code(rc));
        ok += rc == RF_OK;
    }
    cr_log_info("binding: %d of 5 threads bound", ok);
    rf_test_no_leaks();
}

Test(machine, cgroup_v2_cpu_max)
{
    double q = -1;
    cr_assert_eq(rf__machine_parse_cpu_max("max 100000\n", &q), RF_OK);
    cr_assert_float_eq(q, 0.0, 1e-12);
    cr_assert_eq(rf__machine_parse_cpu_max("150000 100000\n", &q), RF_OK);
    cr_assert_float_eq(q, 1.5, 1e-12);
    cr_assert_eq(rf__machine_parse_cpu_max("200000 100000", &q), RF_OK);
    cr_assert_float_eq(q, 2.0, 1e-12);
    cr_assert_eq(rf__machine_parse_cpu_max("50000 100000", &q), RF_OK);
    cr_assert_float_eq(q, 0.5, 1e-12);
    cr_assert_eq(rf__machine_parse_cpu_max("250000", &q), RF_OK, "the period defaults to 100000");
    cr_assert_float_eq(q, 2.5, 1e-12);
    cr_assert_eq(rf__machine_parse_cpu_max("max", &q), RF_OK);
    cr_assert_float_eq(q, 0.0, 1e-12);
    q = 7;
    const char *bad[] = {"",          "\n",       "maxx 100000",     "abc",       "150000 0",
                         "150000 -5", "0 100000", "150000 100000 9", "1.5 100000"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(rf__machine_parse_cpu_max(bad[i], &q), RF_EINVAL, "`%s` should be refused", bad[i]);
    cr_assert_float_eq(q, 7.0, 1e-12, "a refused text leaves the output alone");
    rf_test_no_leaks();
}

Test(machine, cgroup_v1_cfs)
{
    double q = -1;
    cr_assert_eq(rf__machine_parse_cfs("-1\n", "100000\n", &q), RF_OK);
    cr_assert_float_eq(q, 0.0, 1e-12);
    cr_assert_eq(rf__machine_parse_cfs("300000\n", "100000\n", &q), RF_OK);
    cr_assert_float_eq(q, 3.0, 1e-12);
    cr_assert_eq(rf__machine_parse_cfs("25000", "50000", &q), RF_OK);
    cr_assert_float_eq(q, 0.5, 1e-12);
    cr_assert_eq(rf__machine_parse_cfs("x", "100000", &q), RF_EINVAL);
    cr_assert_eq(rf__machine_parse_cfs("100000", "0", &q), RF_EINVAL);
    cr_assert_eq(rf__machine_parse_cfs("100000", "", &q), RF_EINVAL);
    rf_test_no_leaks();
}

Test(machine, usable_rule)
{
    cr_assert_eq(rf__machine_usable(8, 0.0), 8, "no quota: every core");
    cr_assert_eq(rf__machine_usable(8, 1.5), 2, "1.5 CPUs round up to 2");
    cr_assert_eq(rf__machine_usable(8, 2.0), 2);
    cr_assert_eq(rf__machine_usable(8, 0.2), 1);
    cr_assert_eq(rf__machine_usable(4, 16.0), 4, "a quota above the cores changes nothing");
    cr_assert_eq(rf__machine_usable(0, 0.0), 1, "at least one");
    rf_test_no_leaks();
}

Test(machine, bind_team_keeps_the_thread_on_the_usable_cores)
{
    rf_status rc = rf_machine_bind_team();
    cr_assert(rc == RF_OK || rc == RF_EUNSUPPORTED, "bind_team: %s", rf_status_code(rc));
    if (rc == RF_OK) {
        cpu_set_t set;
        CPU_ZERO(&set);
        cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof set, &set), 0);
        cr_assert_geq(CPU_COUNT(&set), 1);
        cr_assert_leq(CPU_COUNT(&set), rf_machine()->pus, "no more CPUs than the process has");
    }
}
