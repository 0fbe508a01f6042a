/* tests/unit/test_probe_nvml.c: NVML loaded at run time (probe/nvml.c): a
 * library that cannot be loaded fails only the nvml source (its state and
 * error say so), names what was tried, and leaves the rest of the facts and
 * the fabric identity untouched. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "facts.h"
#include "nvml.h"

Test(probe_nvml, a_missing_library_fails_only_its_source)
{
    rf_probe_facts_t *f = malloc(sizeof *f);
    cr_assert(f);
    rf__facts_init(f);
    f->n_gpus = 1;
    strcpy(f->gpus[0].busid, "0000:18:00.0");
    rf_error_t err;
    rf_error_clear(&err);
    rf_status rc = rf__nvml_read("/nonexistent/libnvidia-ml.so.1", f, &err);
    cr_assert_neq(rc, RF_OK);
    cr_assert_eq(f->nvml.state, RF_SRC_ERROR);
    cr_assert_neq(f->nvml.error[0], '\0');
    cr_assert(strstr(f->nvml.origin, "nonexistent") || strstr(f->nvml.error, "nonexistent"),
              "what was tried is named: origin %s, error %s", f->nvml.origin, f->nvml.error);
    cr_assert_str_eq(f->accel_domain, "");
    cr_assert_not(f->accel_none, "no answer from NVML is not 'no fabric'");
    cr_assert_str_eq(f->gpus[0].uuid, "");
    cr_assert_eq(f->hwloc.state, RF_SRC_UNUSED);
    free(f);
    rf_test_no_leaks();
}
