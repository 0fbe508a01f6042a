/* tests/unit/test_probe_ibmad.c: the libibmad boundary (probe/ibmad.c,
 * rf__ib_live) where it can be tested without InfiniBand hardware: on a
 * node without HCAs (no /sys/class/infiniband) the source is OK with no
 * ports, its origin says what was asked, ports left from an earlier read
 * are dropped, and the notes say why there is nothing (a CA libibumad names
 * but cannot read, then no port among the HCAs read); the result does not
 * depend on the timeout or the retries, since no SMP is sent. With HCAs
 * present the test is skipped: the live path is tests/integration/probe_ib.sh's. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../support/leak.h"
#include "ib.h"

static bool s_has_hcas(void)
{
    struct stat st;
    return stat("/sys/class/infiniband", &st) == 0;
}

static rf_probe_facts_t *s_facts(void)
{
    rf_probe_facts_t *f = calloc(1, sizeof *f);
    cr_assert_not_null(f);
    rf__facts_init(f);
    return f;
}

Test(probe_ibmad, no_hca_is_an_ok_source_without_ports)
{
    if (s_has_hcas())
        cr_skip_test("this machine has InfiniBand HCAs");
    rf_probe_facts_t *f = s_facts();
    f->n_ib = 3; /* left from an earlier read */
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__ib_live(50, 0, f, &err), RF_OK, "%s", err.message);
    cr_assert_eq(f->ib.state, RF_SRC_OK);
    cr_assert_str_eq(f->ib.origin, "libibmad: directed-route SMPs out of each local port");
    cr_assert_str_empty(f->ib.error);
    cr_assert_eq(f->n_ib, 0);
    cr_assert_geq(f->n_notes, 1);
    /* every note is about InfiniBand; the last says there is no port */
    for (int i = 0; i < f->n_notes; i++)
        cr_assert(strncmp(f->notes[i], "InfiniBand: ", 12) == 0, "%s", f->notes[i]);
    cr_assert_str_eq(f->notes[f->n_notes - 1], "InfiniBand: no InfiniBand port on this node (0 HCAs read)");
    for (int i = 0; i + 1 < f->n_notes; i++)
        cr_assert(strstr(f->notes[i], "(umad_get_ca)"), "%s", f->notes[i]);
    free(f);
    rf_test_no_leaks();
}

Test(probe_ibmad, the_same_answer_whatever_the_timeout_and_retries)
{
    if (s_has_hcas())
        cr_skip_test("this machine has InfiniBand HCAs");
    rf_probe_facts_t *a = s_facts(), *b = s_facts();
    rf_error_t err;
    cr_assert_eq(rf__ib_live(1, 0, a, &err), RF_OK);
    cr_assert_eq(rf__ib_live(10000, 5, b, &err), RF_OK);
    cr_assert_eq(a->n_ib, b->n_ib);
    cr_assert_eq(a->n_notes, b->n_notes);
    for (int i = 0; i < a->n_notes; i++)
        cr_assert_str_eq(a->notes[i], b->notes[i]);
    free(a);
    free(b);
    rf_test_no_leaks();
}
