/* tests/unit/test_probe_facts.c: the probe's facts record helpers
 * (probe/facts.c): init leaves every path unknown and nothing counted, notes
 * append up to the limit and then say the limit was passed, failing a source
 * marks it and fills the caller's error, path names are stable. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "facts.h"

Test(probe_facts, init_zeroes_counts_and_marks_paths_unknown)
{
    rf_probe_facts_t *f = malloc(sizeof *f);
    cr_assert(f);
    memset(f, 0x5a, sizeof *f);
    rf__facts_init(f);
    cr_assert_eq(f->n_gpus + f->n_nics + f->n_lldp + f->n_ib + f->n_notes + f->n_numa, 0);
    cr_assert_eq(f->hwloc.state, RF_SRC_UNUSED);
    cr_assert_eq(f->nvml.state, RF_SRC_UNUSED);
    cr_assert_str_eq(f->hostname, "");
    cr_assert_str_eq(f->accel_domain, "");
    for (int g = 0; g < RF_PROBE_MAX_GPUS; g++) {
        for (int n = 0; n < RF_PROBE_MAX_NICS; n++)
            cr_assert_eq(f->gpu_nic[g][n], RF_PATH_UNKNOWN);
        for (int h = 0; h < RF_PROBE_MAX_GPUS; h++)
            cr_assert_eq(f->gpu_gpu[g][h], RF_PATH_UNKNOWN);
    }
    free(f);
    rf_test_no_leaks();
}

Test(probe_facts, notes_append_then_say_the_limit_was_passed)
{
    rf_probe_facts_t *f = malloc(sizeof *f);
    cr_assert(f);
    rf__facts_init(f);
    rf__facts_note(f, "no %s on %d", "nvml", 3);
    cr_assert_eq(f->n_notes, 1);
    cr_assert_str_eq(f->notes[0], "no nvml on 3");
    for (int i = 1; i < RF_PROBE_MAX_NOTES; i++)
        rf__facts_note(f, "note %d", i);
    cr_assert_eq(f->n_notes, RF_PROBE_MAX_NOTES);
    cr_assert_str_eq(f->notes[RF_PROBE_MAX_NOTES - 1], "note 31");
    rf__facts_note(f, "one too many");
    cr_assert_eq(f->n_notes, RF_PROBE_MAX_NOTES, "never past the limit");
    cr_assert(strstr(f->notes[RF_PROBE_MAX_NOTES - 1], "limit"), "the last note says the limit was passed: %s",
              f->notes[RF_PROBE_MAX_NOTES - 1]);
    cr_assert_str_eq(f->notes[0], "no nvml on 3", "earlier notes are kept");
    /* a note longer than its slot is cut, NUL-terminated */
    rf__facts_init(f);
    char long_note[600];
    memset(long_note, 'x', sizeof long_note - 1);
    long_note[sizeof long_note - 1] = '\0';
    rf__facts_note(f, "%s", long_note);
    cr_assert_eq(strlen(f->notes[0]), sizeof f->notes[0] - 1);
    free(f);
    rf_test_no_leaks();
}

Test(probe_facts, src_fail_marks_the_source_and_the_error)
{
    rf_probe_src_t src;
    memset(&src, 0, sizeof src);
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__src_fail(&src, RF_EIO, &err, "cannot read %s", "/sys/x"), RF_EIO);
    cr_assert_eq(src.state, RF_SRC_ERROR);
    cr_assert_str_eq(src.error, "cannot read /sys/x");
    cr_assert_eq(err.code, RF_EIO);
    cr_assert_str_eq(err.message, "cannot read /sys/x");
    cr_assert_eq(rf__src_fail(&src, RF_ELIMIT, NULL, "%s", "too many GPUs"), RF_ELIMIT, "a NULL error is allowed");
    cr_assert_str_eq(src.error, "too many GPUs");
    rf_test_no_leaks();
}

Test(probe_facts, path_names)
{
    static const char *const want[] = {"pix", "pxb", "phb", "node", "package", "sys", "unknown"};
    for (int p = RF_PATH_PIX; p <= RF_PATH_UNKNOWN; p++)
        cr_assert_str_eq(rf__path_name((rf_probe_path)p), want[p]);
    cr_assert_str_eq(rf__path_name((rf_probe_path)99), "unknown");
    cr_assert_str_eq(rf__path_name((rf_probe_path)-1), "unknown");
    rf_test_no_leaks();
}
