/* bench/gen.c: deterministic problem generators (see gen.h).
 *
 * The host model and the job mix are shared by both topologies:
 *
 * Hosts: 8 GPUs, cpu "128", memory "1Ti", pods 110. A host is fully used with
 * probability 0.7*load and partly used (1..7 GPUs) with probability 0.6*load,
 * so the expected used fraction is `load` (re-solved when load > 1/1.3). A GPU
 * in use also holds 12 cpu and 96Gi. 0.5 % of hosts are cordoned, 1 % carry
 * the taint example.com/maintenance=true:NoSchedule.
 *
 * Jobs: sizes in GPUs are drawn from the pooled empirical histogram of the
 * Pollux workloads (1280 jobs: 1:1199 2:5 4:37 8:29 16:8 32:2) and the Tiresias
 * 60-job trace (1:30 2:10 4:10 8:10). That mix alone asks for ~1.7 GPUs per
 * job, far from filling a cluster, and production traces have a heavy tail
 * (Acme: mean 26.77 GPUs per GPU job on Kalos, max 1024 on Seren and Kalos);
 * so jobs picked uniformly at random are turned into tail jobs, log-uniform on
 * {16, 32, ..., cap} with cap = min(1024, total GPUs / 8), until the requested
 * GPUs reach `contention` times the free GPUs (or every job is in the tail).
 *
 * A job of n GPUs is a gang: n < 8 -> one pod of n GPUs; n >= 8 -> n/8 pods of
 * 8 GPUs. Then, by independent draws: topology required rack (25 % of gangs
 * of >= 2 pods that fit one rack) or block (another 25 %, when they fit one
 * block);
 * slices of 4 or 8 pods required in a rack (20 % of gangs of >= 8 pods, with a
 * required block half the time); a launcher pod set (1 pod, 4 cpu, 16Gi, no
 * GPU) before the workers (10 % of gangs of >= 2 pods); elastic, min_count =
 * half of count (15 % of gangs of >= 2 pods); priority 0 / 100 / 1000 with
 * probability 0.6 / 0.3 / 0.1; a toleration of the maintenance taint (10 %);
 * a node selector on the GPU product label (30 %, fabric only).
 *
 * Every draw goes through one PRNG in one fixed order, so a seed fixes the
 * bytes. Draws are integers or 53-bit fractions compared with constants;
 * nothing in the output is formatted from a floating-point value. */
#include "gen.h"
#include "grow.h"
#include "rackfit/quantity.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_GPUS_PER_HOST 8
#define S_TAIL_MIN      16
#define S_TAIL_MAX      1024

/* ---- PRNG: xoshiro256** seeded by splitmix64 ------------------------------------------------------------------- */

typedef struct {
    uint64_t s[4];
} s_rng_t;

static uint64_t s_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static void s_rng_seed(s_rng_t *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = s_splitmix64(&seed);
}

static uint64_t s_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t s_rng_next(s_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t result = s_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static uint64_t s_rng_below(s_rng_t *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = s_rng_next(r);
    } while (x >= limit);
    return x % n;
}

/* True with probability num/den (exact integer comparison). */
static bool s_rng_chance(s_rng_t *r, uint64_t num, uint64_t den)
{
    return s_rng_below(r, den) < num;
}

/* ---- hosts ----------------------------------------------------------------------------------------------------- */

typedef struct {
    char name[72];
    char block[40];
    char rack[80];
    int32_t rack_id;  /* dense, in first-seen order */
    int32_t block_id; /* dense, in first-seen order */
} s_host_t;

typedef struct {
    s_host_t *hosts;
    int32_t n;
    int32_t n_racks;
    int32_t n_blocks;
    int32_t rack_hosts;  /* hosts in the largest rack */
    int32_t block_hosts; /* hosts in the smallest block */
    const char *product; /* nvidia.com/gpu.product label value, or NULL */
} s_fabric_t;

/* The job-size body: pooled Pollux (1280 jobs) + Tiresias 60_job (60 jobs). */
static const int32_t s_body_size[] = {1, 2, 4, 8, 16, 32};
static const int32_t s_body_count[] = {1199 + 30, 5 + 10, 37 + 10, 29 + 10, 8, 2};

static int32_t s_draw_body(s_rng_t *r)
{
    int32_t total = 0;
    for (size_t i = 0; i < sizeof(s_body_count) / sizeof(s_body_count[0]); i++)
        total += s_body_count[i];
    int32_t x = (int32_t)s_rng_below(r, (uint64_t)total);
    for (size_t i = 0; i < sizeof(s_body_count) / sizeof(s_body_count[0]); i++) {
        if (x < s_body_count[i])
            return s_body_size[i];
        x -= s_body_count[i];
    }
    return 1;
}

static int32_t s_draw_tail(s_rng_t *r, int32_t cap)
{
    int32_t steps = 0;
    for (int32_t s = S_TAIL_MIN; s * 2 <= cap; s *= 2)
        steps++;
    return S_TAIL_MIN << s_rng_below(r, (uint64_t)steps + 1);
}

/* ---- emit ------------------------------------------------------------------------------------------------------ */

typedef struct {
    int32_t gpus; /* total GPUs of the job */
    bool tail;
} s_job_t;

/* The cluster: every host, with its used GPUs, cordons and taints drawn
 * (probabilities out of `den`: full hosts pf_i, partly used pp_i). */
static void s_emit_nodes(const s_fabric_t *f, s_rng_t *rng, uint64_t den, uint64_t pf_i, uint64_t pp_i, rf__jw_t *out,
                         bench_gen_stats_t *st_out)
{
    bench_gen_stats_t st = *st_out;
    rf__jw_printf(out, "{\n  \"cluster\": {\n");
    rf__jw_printf(out, "    \"levels\": [\"example.com/block\", \"example.com/rack\", \"kubernetes.io/hostname\"],\n");
    rf__jw_printf(out, "    \"level_costs\": [100, 10, 1],\n    \"nodes\": [\n");
    for (int32_t i = 0; i < f->n; i++) {
        const s_host_t *h = &f->hosts[i];
        uint64_t u = s_rng_below(rng, den);
        int32_t used = 0;
        if (u < pf_i)
            used = S_GPUS_PER_HOST;
        else if (u < pf_i + pp_i)
            used = 1 + (int32_t)s_rng_below(rng, S_GPUS_PER_HOST - 1);
        bool cordoned = s_rng_chance(rng, 5, 1000);
        bool tainted = s_rng_chance(rng, 10, 1000);
        st.gpus_total += S_GPUS_PER_HOST;
        if (!cordoned)
            st.gpus_free += S_GPUS_PER_HOST - used;

        rf__jw_printf(out,
                      "      {\"name\": \"%s\", \"labels\": {\"example.com/block\": \"%s\", \"example.com/rack\": "
                      "\"%s\", \"kubernetes.io/hostname\": \"%s\"",
                      h->name, h->block, h->rack, h->name);
        if (f->product)
            rf__jw_printf(out, ", \"nvidia.com/gpu.product\": \"%s\"", f->product);
        rf__jw_printf(out,
                      "},\n       \"allocatable\": {\"nvidia.com/gpu\": %d, \"cpu\": \"128\", \"memory\": \"1Ti\", "
                      "\"pods\": 110}",
                      S_GPUS_PER_HOST);
        if (used > 0)
            rf__jw_printf(out,
                          ",\n       \"used\": {\"nvidia.com/gpu\": %d, \"cpu\": \"%d\", \"memory\": \"%dGi\", "
                          "\"pods\": %d}",
                          used, used * 12, used * 96, (used + 1) / 2);
        if (tainted)
            rf__jw_printf(out, ",\n       \"taints\": [{\"key\": \"example.com/maintenance\", \"value\": \"true\", "
                               "\"effect\": \"NoSchedule\"}]");
        if (cordoned)
            rf__jw_printf(out, ",\n       \"unschedulable\": true");
        rf__jw_printf(out, "}%s\n", i + 1 < f->n ? "," : "");
    }
    rf__jw_printf(out, "    ]\n  },\n  \"gangs\": [\n");

    *st_out = st;
}

/* Job sizes: the body for every job, then the tail until the contention
 * is met. malloc'ed [o->gangs], NULL on ENOMEM. */
static s_job_t *s_draw_jobs(const bench_gen_opts_t *o, s_rng_t *rng, const bench_gen_stats_t *st_in)
{
    const bench_gen_stats_t st = *st_in;
    s_job_t *jobs = calloc(o->gangs > 0 ? (size_t)o->gangs : 1, sizeof(*jobs));
    if (!jobs)
        return NULL;
    int64_t requested = 0;
    for (int32_t g = 0; g < o->gangs; g++) {
        jobs[g].gpus = s_draw_body(rng);
        requested += jobs[g].gpus;
    }
    int32_t cap = S_TAIL_MIN;
    while (cap * 2 <= S_TAIL_MAX && (int64_t)cap * 2 * 8 <= st.gpus_total)
        cap *= 2;
    int64_t target = (int64_t)(o->contention * (double)st.gpus_free);
    int32_t n_tail = 0;
    while (requested < target && n_tail < o->gangs) {
        int32_t g = (int32_t)s_rng_below(rng, (uint64_t)o->gangs);
        if (jobs[g].tail)
            continue;
        int32_t size = s_draw_tail(rng, cap);
        requested += size - jobs[g].gpus;
        jobs[g].gpus = size;
        jobs[g].tail = true;
        n_tail++;
    }

    return jobs;
}

static const char *const s_teams[] = {"vision", "speech", "nlp", "rec", "rl", "infra"};

/* Gang g of job `job`: its pod sets, topology, slice, elasticity, priority,
 * tolerations and selector drawn. */
static void s_emit_gang(const s_fabric_t *f, const bench_gen_opts_t *o, s_rng_t *rng, uint64_t den, int32_t g,
                        const s_job_t *job, rf__jw_t *out, bench_gen_stats_t *st)
{
    int32_t n = job->gpus;
    int32_t pods = n < S_GPUS_PER_HOST ? 1 : n / S_GPUS_PER_HOST;
    int32_t per_pod = n < S_GPUS_PER_HOST ? n : S_GPUS_PER_HOST;
    const char *required = NULL, *slice_level = NULL;
    int32_t slice = 0;

    uint64_t u_top = s_rng_below(rng, den);
    uint64_t u_slice = s_rng_below(rng, den);
    uint64_t u_slice_size = s_rng_below(rng, 2);
    uint64_t u_slice_block = s_rng_below(rng, 2);
    uint64_t u_launcher = s_rng_below(rng, den);
    uint64_t u_elastic = s_rng_below(rng, den);
    uint64_t u_prio = s_rng_below(rng, den);
    uint64_t u_tol = s_rng_below(rng, den);
    uint64_t u_sel = s_rng_below(rng, den);
    uint64_t u_team = s_rng_below(rng, sizeof(s_teams) / sizeof(s_teams[0]));

    if (pods >= 8 && u_slice < den / 5) {
        int32_t s = u_slice_size ? 8 : 4;
        if (s > f->rack_hosts || pods % s != 0)
            s = 4;
        if (s <= f->rack_hosts && pods % s == 0) {
            slice = s;
            slice_level = "example.com/rack";
            if (u_slice_block && pods <= f->block_hosts)
                required = "example.com/block";
        }
    }
    if (!slice) {
        if (pods >= 2 && pods <= f->rack_hosts && u_top < den / 4)
            required = "example.com/rack";
        else if (pods >= 2 && pods <= f->block_hosts && u_top >= den / 4 && u_top < den / 2)
            required = "example.com/block";
    }
    bool launcher = pods >= 2 && u_launcher < den / 10;
    int32_t min_count = pods;
    if (pods >= 2 && u_elastic < den * 15 / 100) {
        int32_t unit = slice ? slice : 1;
        min_count = (pods / 2 + unit - 1) / unit * unit;
    }
    int64_t priority = u_prio < den * 6 / 10 ? 0 : (u_prio < den * 9 / 10 ? 100 : 1000);
    bool tolerate = u_tol < den / 10;
    bool select = f->product && u_sel < den * 3 / 10;

    st->pods += pods + (launcher ? 1 : 0);
    st->gpus_requested += n;

    rf__jw_printf(out, "    {\"name\": \"%s/job-%05d\", \"priority\": %lld", s_teams[u_team], (int)g,
                  (long long)priority);
    if (required)
        rf__jw_printf(out, ", \"topology\": {\"required\": \"%s\"}", required);
    rf__jw_printf(out, ",\n     \"pod_sets\": [");
    const char *tol = tolerate ? ", \"tolerations\": [{\"key\": \"example.com/maintenance\", \"operator\": "
                                 "\"Exists\", \"effect\": \"NoSchedule\"}]"
                               : "";
    char sel[96] = "";
    if (select)
        snprintf(sel, sizeof(sel), ", \"node_selector\": {\"nvidia.com/gpu.product\": \"%s\"}", f->product);
    if (launcher)
        rf__jw_printf(out,
                      "\n       {\"name\": \"launcher\", \"count\": 1, \"requests\": {\"cpu\": \"4\", "
                      "\"memory\": \"16Gi\"}%s},",
                      tol);
    rf__jw_printf(out,
                  "\n       {\"name\": \"workers\", \"count\": %d, \"min_count\": %d, \"requests\": "
                  "{\"nvidia.com/gpu\": %d, \"cpu\": \"%d\", \"memory\": \"%dGi\"}%s%s",
                  (int)pods, (int)min_count, (int)per_pod, (int)per_pod * 12, (int)per_pod * 96, sel, tol);
    if (slice)
        rf__jw_printf(out, ", \"slice\": {\"size\": %d, \"required\": \"%s\"}", (int)slice, slice_level);
    rf__jw_printf(out, "}]}%s\n", g + 1 < o->gangs ? "," : "");
}

static rf_status s_emit(const s_fabric_t *f, const bench_gen_opts_t *o, s_rng_t *rng, rf__jw_t *out,
                        bench_gen_stats_t *stats, rf_error_t *err)
{
    if (o->gangs < 0 || o->gangs > 10000000)
        return rf_error_set(err, RF_EINVAL, "", "--gangs must be between 0 and 10000000");
    if (!(o->load >= 0 && o->load <= 0.95))
        return rf_error_set(err, RF_EINVAL, "", "--load must be in [0, 0.95]");
    if (!(o->contention > 0 && o->contention <= 1000))
        return rf_error_set(err, RF_EINVAL, "", "--contention must be in (0, 1000]");

    /* Probabilities as integers out of 1e6, so the draws are exact. */
    const uint64_t den = 1000000;
    double pf = 0.7 * o->load, pp = 0.6 * o->load;
    if (pf + pp > 1) {
        pp = 2 * (1 - o->load);
        pf = 1 - pp;
    }
    uint64_t pf_i = (uint64_t)(pf * (double)den + 0.5), pp_i = (uint64_t)(pp * (double)den + 0.5);

    bench_gen_stats_t st = {0};
    st.nodes = f->n;
    st.racks = f->n_racks;
    st.blocks = f->n_blocks;
    st.gangs = o->gangs;

    s_emit_nodes(f, rng, den, pf_i, pp_i, out, &st);
    s_job_t *jobs = s_draw_jobs(o, rng, &st);
    if (!jobs)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (int32_t g = 0; g < o->gangs; g++)
        s_emit_gang(f, o, rng, den, g, &jobs[g], out, &st);
    rf__jw_printf(out, "  ]\n}\n");
    free(jobs);
    if (out->oom)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory writing the problem");
    if (stats)
        *stats = st;
    return RF_OK;
}

/* ---- fabric ---------------------------------------------------------------------------------------------------- */

void bench_gen_opts_fabric(bench_gen_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->blocks = 16;
    opts->racks = 32;
    opts->hosts = 32;
    opts->gangs = 1000;
    opts->seed = 1;
    opts->load = 0.25;
    opts->contention = 1.2;
}

void bench_gen_opts_lingjun(bench_gen_opts_t *opts)
{
    bench_gen_opts_fabric(opts);
    opts->blocks = opts->racks = opts->hosts = 0;
    opts->gangs = 200;
}

rf_status bench_gen_fabric(const bench_gen_opts_t *opts, rf__jw_t *out, bench_gen_stats_t *stats, rf_error_t *err)
{
    if (opts->blocks < 1 || opts->racks < 1 || opts->hosts < 1 || opts->blocks > 1000 || opts->racks > 1000 ||
        opts->hosts > 1000 || (int64_t)opts->blocks * opts->racks * opts->hosts > 1000000)
        return rf_error_set(err, RF_EINVAL, "", "--blocks, --racks, --hosts must be 1..1000 and at most 1e6 hosts");
    s_fabric_t f = {0};
    f.n = opts->blocks * opts->racks * opts->hosts;
    f.n_blocks = opts->blocks;
    f.n_racks = opts->blocks * opts->racks;
    f.rack_hosts = opts->hosts;
    f.block_hosts = opts->racks * opts->hosts;
    f.product = "H100";
    f.hosts = calloc((size_t)f.n, sizeof(*f.hosts));
    if (!f.hosts)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    int32_t i = 0;
    for (int32_t b = 0; b < opts->blocks; b++)
        for (int32_t r = 0; r < opts->racks; r++)
            for (int32_t h = 0; h < opts->hosts; h++, i++) {
                s_host_t *x = &f.hosts[i];
                snprintf(x->block, sizeof(x->block), "b%03d", (int)b);
                snprintf(x->rack, sizeof(x->rack), "b%03d-r%03d", (int)b, (int)r);
                snprintf(x->name, sizeof(x->name), "b%03d-r%03d-h%03d", (int)b, (int)r, (int)h);
                x->block_id = b;
                x->rack_id = b * opts->racks + r;
            }
    s_rng_t rng;
    s_rng_seed(&rng, opts->seed);
    rf_status st = s_emit(&f, opts, &rng, out, stats, err);
    free(f.hosts);
    return st;
}

/* ---- lingjun --------------------------------------------------------------------------------------------------- */

static int s_cmp_name(const void *a, const void *b)
{
    return strcmp(((const s_host_t *)a)->name, ((const s_host_t *)b)->name);
}

/* Copy CSV field `i` (0-based) of `line` into `dst`; false when missing or too long. */
static bool s_csv_field(const char *line, int i, char *dst, size_t cap)
{
    const char *p = line;
    for (int k = 0; k < i; k++) {
        p = strchr(p, ',');
        if (!p)
            return false;
        p++;
    }
    size_t n = strcspn(p, ",\r\n");
    if (n == 0 || n >= cap)
        return false;
    memcpy(dst, p, n);
    dst[n] = '\0';
    return true;
}

/* Give every host a name: the first 12 hex digits of its hashed ip, longer
 * when two hosts would share one. */
static bool s_name_hosts(s_fabric_t *f, char (*ips)[72])
{
    s_host_t *tmp = malloc((size_t)f->n * sizeof(*tmp));
    if (!tmp)
        return false;
    for (size_t len = 12; len < 72; len += 4) {
        for (int32_t i = 0; i < f->n; i++) {
            snprintf(f->hosts[i].name, sizeof(f->hosts[i].name), "%.*s", (int)len, ips[i]);
            tmp[i] = f->hosts[i];
        }
        qsort(tmp, (size_t)f->n, sizeof(*tmp), s_cmp_name);
        bool unique = true;
        for (int32_t i = 1; i < f->n && unique; i++)
            unique = strcmp(tmp[i - 1].name, tmp[i].name) != 0;
        if (unique)
            break;
    }
    free(tmp);
    return true;
}

rf_status bench_gen_lingjun(const bench_gen_opts_t *opts, rf__jw_t *out, bench_gen_stats_t *stats, rf_error_t *err)
{
    if (!opts->topo)
        return rf_error_set(err, RF_EINVAL, "", "lingjun needs --topo PATH (alibaba-lingjun-2023/topo.csv)");
    FILE *fp = fopen(opts->topo, "r");
    if (!fp)
        return rf_error_set(err, RF_EIO, "", "%s: %s", opts->topo, strerror(errno));

    rf_status st = RF_OK;
    s_fabric_t f = {0};
    char(*ips)[72] = NULL;
    int32_t cap = 0;
    char line[512];
    long lineno = 0;
    while (fgets(line, sizeof(line), fp)) {
        lineno++;
        if (lineno == 1 && strncmp(line, "ip,", 3) == 0)
            continue;
        if (line[0] == '\n' || line[0] == '\r' || line[0] == '\0')
            continue;
        if (f.n == cap) { /* two arrays of one capacity */
            int32_t cap_h = cap, cap_ip = cap;
            s_host_t *h = rf__grow(f.hosts, &cap_h, (int64_t)f.n + 1, 1024, sizeof(*h));
            char(*ip)[72] = rf__grow(ips, &cap_ip, (int64_t)f.n + 1, 1024, sizeof(*ip));
            if (h)
                f.hosts = h;
            if (ip)
                ips = ip;
            if (!h || !ip) {
                st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                goto done;
            }
            cap = cap_h;
        }
        s_host_t *x = &f.hosts[f.n];
        memset(x, 0, sizeof(*x));
        char psw[40], asw[40];
        if (!s_csv_field(line, 0, ips[f.n], sizeof(ips[f.n])) || !s_csv_field(line, 2, psw, sizeof(psw)) ||
            !s_csv_field(line, 3, asw, sizeof(asw))) {
            st = rf_error_set(err, RF_EIO, "", "%s:%ld: expected ip,DSW,PSW,ASW", opts->topo, lineno);
            goto done;
        }
        snprintf(x->block, sizeof(x->block), "%s", psw);
        snprintf(x->rack, sizeof(x->rack), "%s-%s", psw, asw);
        f.n++;
    }
    if (f.n == 0) {
        st = rf_error_set(err, RF_EIO, "", "%s: no hosts", opts->topo);
        goto done;
    }
    if (!s_name_hosts(&f, ips)) {
        st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    /* Dense rack and block ids in first-seen order (quadratic; a few hundred racks). */
    int32_t *rack_count = calloc((size_t)f.n, sizeof(int32_t));
    int32_t *block_count = calloc((size_t)f.n, sizeof(int32_t));
    if (!rack_count || !block_count) {
        free(rack_count);
        free(block_count);
        st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    for (int32_t i = 0; i < f.n; i++) {
        s_host_t *x = &f.hosts[i];
        x->rack_id = x->block_id = -1;
        for (int32_t j = 0; j < i && (x->rack_id < 0 || x->block_id < 0); j++) {
            if (x->rack_id < 0 && strcmp(f.hosts[j].rack, x->rack) == 0)
                x->rack_id = f.hosts[j].rack_id;
            if (x->block_id < 0 && strcmp(f.hosts[j].block, x->block) == 0)
                x->block_id = f.hosts[j].block_id;
        }
        if (x->rack_id < 0)
            x->rack_id = f.n_racks++;
        if (x->block_id < 0)
            x->block_id = f.n_blocks++;
        rack_count[x->rack_id]++;
        block_count[x->block_id]++;
    }
    f.block_hosts = INT32_MAX;
    for (int32_t r = 0; r < f.n_racks; r++)
        if (rack_count[r] > f.rack_hosts)
            f.rack_hosts = rack_count[r];
    for (int32_t b = 0; b < f.n_blocks; b++)
        if (block_count[b] < f.block_hosts)
            f.block_hosts = block_count[b];
    free(rack_count);
    free(block_count);

    s_rng_t rng;
    s_rng_seed(&rng, opts->seed);
    st = s_emit(&f, opts, &rng, out, stats, err);
done:
    fclose(fp);
    free(f.hosts);
    free(ips);
    return st;
}

/* ---- the running-gang variant (gen.h) -------------------------------------------------------------------------- */

#define S_RUN_TAIL_ONE_IN 10  /* one running job in ten is a tail job */
#define S_RUN_GIVE_UP     200 /* jobs in a row without room end the filling */
#define S_RUN_MAX         100000

void bench_run_opts_default(bench_run_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->seed = 1;
    opts->fill = 0.6;
}

/* One running job as placed: its pods' node and count, per node. */
typedef struct {
    int32_t first, n; /* range in the placement list */
    int32_t gpus_per_pod;
    int32_t pods;
    int64_t priority;
    bool preemptible;
    int32_t team;
} s_run_t;

typedef struct {
    const rf_problem_t *p;
    int32_t R;
    int32_t *order; /* eligible nodes, by label path */
    int32_t n_order;
    int64_t *used; /* [n_nodes * R] used, running pods included */
    int32_t ix_gpu, ix_cpu, ix_mem;
    int64_t req[3]; /* the current pod's gpu, cpu (millicores), memory (bytes) */
    rf_run_placement_t *pl;
    int32_t n_pl, cap_pl;
    s_run_t *runs;
    int32_t n_runs, cap_runs;
    int32_t *fit;                /* [n_order] pods of the current shape per position */
    int32_t *dom[RF_MAX_LEVELS]; /* [n_order] domain id of each position, per level */
} s_fill_t;

static int64_t s_fill_node_fit(const s_fill_t *f, int32_t n)
{
    const rf_node_t *node = &f->p->nodes[n];
    const int64_t *u = &f->used[(size_t)n * (size_t)f->R];
    int64_t fit = S_RUN_MAX;
    const int32_t ix[4] = {f->ix_gpu, f->ix_cpu, f->ix_mem, RF_RES_PODS};
    const int64_t rq[4] = {f->req[0], f->req[1], f->req[2], 1};
    for (int k = 0; k < 4; k++) {
        if (ix[k] < 0 || rq[k] <= 0 || node->allocatable[ix[k]] == RF_QTY_UNLIMITED)
            continue;
        int64_t room = node->allocatable[ix[k]] - u[ix[k]];
        int64_t q = room > 0 ? room / rq[k] : 0;
        if (q < fit)
            fit = q;
    }
    return fit;
}

/* Nodes sorted by their path of level values (ties by index): the domains
 * of every level are then contiguous ranges of positions. */
typedef struct {
    const rf_problem_t *p;
    int32_t node;
} s_node_path_t;

static int s_cmp_node_path(const void *a, const void *b)
{
    const s_node_path_t *x = a, *y = b;
    const rf_problem_t *p = x->p;
    for (int32_t l = 0; l < p->n_levels; l++) {
        int k =
            strcmp(rf_node_label(&p->nodes[x->node], p->levels[l]), rf_node_label(&p->nodes[y->node], p->levels[l]));
        if (k)
            return k;
    }
    return (x->node > y->node) - (x->node < y->node);
}

/* Place `pods` pods of the current shape compactly: the smallest domain
 * (hosts, then up the levels, then the whole cluster) whose room holds them
 * all, best fit (least room, first in label order); inside it, nodes in
 * label order, each filled as far as it goes. 1 when placed, 0 when
 * nothing holds them, -1 out of memory. */
static int s_fill_place(s_fill_t *f, int32_t pods, int32_t *first, int32_t *n_out)
{
    int64_t total = 0;
    for (int32_t i = 0; i < f->n_order; i++) {
        f->fit[i] = (int32_t)s_fill_node_fit(f, f->order[i]);
        total += f->fit[i];
    }
    if (total < pods)
        return 0;
    int32_t best_s = 0, best_e = f->n_order;
    for (int32_t l = f->p->n_levels - 1; l >= 0; l--) {
        int64_t best = -1;
        for (int32_t s = 0; s < f->n_order;) {
            int32_t e = s;
            int64_t room = 0;
            while (e < f->n_order && f->dom[l][e] == f->dom[l][s])
                room += f->fit[e++];
            if (room >= pods && (best < 0 || room < best)) {
                best = room;
                best_s = s;
                best_e = e;
            }
            s = e;
        }
        if (best >= 0)
            break;
    }
    *first = f->n_pl;
    int32_t left = pods;
    for (int32_t i = best_s; i < best_e && left > 0; i++) {
        if (f->fit[i] <= 0)
            continue;
        int32_t take = f->fit[i] < left ? f->fit[i] : left;
        if (f->n_pl == f->cap_pl) {
            rf_run_placement_t *g = rf__grow(f->pl, &f->cap_pl, (int64_t)f->n_pl + 1, 1024, sizeof(*g));
            if (!g)
                return -1;
            f->pl = g;
        }
        int32_t n = f->order[i];
        f->pl[f->n_pl].node = n;
        f->pl[f->n_pl].count = take;
        f->n_pl++;
        int64_t *u = &f->used[(size_t)n * (size_t)f->R];
        if (f->ix_gpu >= 0)
            u[f->ix_gpu] += take * f->req[0];
        if (f->ix_cpu >= 0)
            u[f->ix_cpu] += take * f->req[1];
        if (f->ix_mem >= 0)
            u[f->ix_mem] += take * f->req[2];
        if (f->p->nodes[n].allocatable[RF_RES_PODS] != RF_QTY_UNLIMITED)
            u[RF_RES_PODS] += take;
        left -= take;
    }
    *n_out = f->n_pl - *first;
    return 1; /* left is 0: the domain's room was counted first */
}

/* ---- writing a problem back as contract JSON ---- */

static void s_w_qty(rf__jw_t *o, const rf_problem_t *p, int32_t r, int64_t v)
{
    char buf[64];
    rf_qty_format(v, rf_qty_kind_of(p->resources[r]), buf, (int)sizeof(buf));
    rf__jw_sep(o);
    rf__jw_key(o, p->resources[r]);
    rf__jw_str(o, buf);
}

/* A quantity map of the resources in v that are non-zero (skip: pods when
 * `skip_pods`, or UNLIMITED values). */
static void s_w_qtys(rf__jw_t *o, const rf_problem_t *p, const char *key, const int64_t *v, bool skip_pods)
{
    bool any = false;
    for (int32_t r = skip_pods ? 1 : 0; r < p->n_resources; r++)
        any = any || (v[r] != 0 && v[r] != RF_QTY_UNLIMITED);
    if (!any)
        return;
    rf__jw_key(o, key); /* writes its own comma */
    rf__jw_printf(o, "{");
    for (int32_t r = skip_pods ? 1 : 0; r < p->n_resources; r++)
        if (v[r] != 0 && v[r] != RF_QTY_UNLIMITED)
            s_w_qty(o, p, r, v[r]);
    rf__jw_printf(o, "}");
}

static const char *s_effect_name(rf_effect e)
{
    return e == RF_EFFECT_NO_SCHEDULE          ? "NoSchedule"
           : e == RF_EFFECT_PREFER_NO_SCHEDULE ? "PreferNoSchedule"
           : e == RF_EFFECT_NO_EXECUTE         ? "NoExecute"
                                               : NULL;
}

static void s_w_topology(rf__jw_t *o, const rf_problem_t *p, rf_topology_t t)
{
    if (t.required < 0 && t.preferred < 0)
        return;
    rf__jw_printf(o, ", \"topology\": {");
    if (t.required >= 0) {
        rf__jw_key(o, "required");
        rf__jw_str(o, p->levels[t.required]);
    }
    if (t.preferred >= 0) {
        rf__jw_sep(o);
        rf__jw_key(o, "preferred");
        rf__jw_str(o, p->levels[t.preferred]);
    }
    rf__jw_printf(o, "}");
}

static void s_w_nodes(rf__jw_t *o, const rf_problem_t *p, const int64_t *used)
{
    rf__jw_printf(o, "{\n  \"cluster\": {\n    \"levels\": [");
    for (int32_t l = 0; l < p->n_levels; l++) {
        rf__jw_sep(o);
        rf__jw_str(o, p->levels[l]);
    }
    rf__jw_printf(o, "],\n    \"level_costs\": [");
    for (int32_t l = 0; l < p->n_levels; l++)
        rf__jw_printf(o, "%s%.17g", l ? ", " : "", p->level_costs[l]);
    rf__jw_printf(o, "],\n    \"nodes\": [\n");
    for (int32_t n = 0; n < p->n_nodes; n++) {
        const rf_node_t *node = &p->nodes[n];
        rf__jw_printf(o, "      {\"name\": ");
        rf__jw_str(o, node->name);
        rf__jw_printf(o, ", \"labels\": {");
        for (int32_t i = 0; i < node->n_labels; i++) {
            rf__jw_sep(o);
            rf__jw_key(o, node->labels[i].key);
            rf__jw_str(o, node->labels[i].value);
        }
        rf__jw_printf(o, "}");
        s_w_qtys(o, p, "allocatable", node->allocatable, false);
        s_w_qtys(o, p, "used", &used[(size_t)n * (size_t)p->n_resources], false);
        if (node->n_taints > 0) {
            rf__jw_printf(o, ", \"taints\": [");
            for (int32_t i = 0; i < node->n_taints; i++) {
                const rf_taint_t *t = &node->taints[i];
                rf__jw_printf(o, "%s{\"key\": ", i ? ", " : "");
                rf__jw_str(o, t->key);
                if (t->value && t->value[0]) {
                    rf__jw_printf(o, ", \"value\": ");
                    rf__jw_str(o, t->value);
                }
                rf__jw_printf(o, ", \"effect\": \"%s\"}",
                              s_effect_name(t->effect) ? s_effect_name(t->effect) : "NoSchedule");
            }
            rf__jw_printf(o, "]");
        }
        if (node->unschedulable)
            rf__jw_printf(o, ", \"unschedulable\": true");
        rf__jw_printf(o, "}%s\n", n + 1 < p->n_nodes ? "," : "");
    }
    rf__jw_printf(o, "    ]\n  },\n");
}

static void s_w_pod_set(rf__jw_t *o, const rf_problem_t *p, const rf_pod_set_t *ps)
{
    rf__jw_printf(o, "{\"name\": ");
    rf__jw_str(o, ps->name);
    rf__jw_printf(o, ", \"count\": %lld, \"min_count\": %lld", (long long)ps->count, (long long)ps->min_count);
    s_w_qtys(o, p, "requests", ps->requests, true);
    if (ps->n_node_selector > 0) {
        rf__jw_printf(o, ", \"node_selector\": {");
        for (int32_t i = 0; i < ps->n_node_selector; i++) {
            rf__jw_sep(o);
            rf__jw_key(o, ps->node_selector[i].key);
            rf__jw_str(o, ps->node_selector[i].value);
        }
        rf__jw_printf(o, "}");
    }
    if (ps->n_tolerations > 0) {
        rf__jw_printf(o, ", \"tolerations\": [");
        for (int32_t i = 0; i < ps->n_tolerations; i++) {
            const rf_toleration_t *t = &ps->tolerations[i];
            rf__jw_printf(o, "%s{\"operator\": \"%s\"", i ? ", " : "", t->op == RF_TOL_EXISTS ? "Exists" : "Equal");
            if (t->key && t->key[0]) {
                rf__jw_printf(o, ", \"key\": ");
                rf__jw_str(o, t->key);
            }
            if (t->value && t->value[0]) {
                rf__jw_printf(o, ", \"value\": ");
                rf__jw_str(o, t->value);
            }
            if (s_effect_name(t->effect))
                rf__jw_printf(o, ", \"effect\": \"%s\"", s_effect_name(t->effect));
            rf__jw_printf(o, "}");
        }
        rf__jw_printf(o, "]");
    }
    s_w_topology(o, p, ps->topology);
    if (ps->slice.size > 0) {
        rf__jw_printf(o, ", \"slice\": {\"size\": %d, \"required\": ", (int)ps->slice.size);
        rf__jw_str(o, p->levels[ps->slice.level]);
        rf__jw_printf(o, "}");
    }
    if (ps->n_bound > 0) {
        rf__jw_printf(o, ", \"bound\": [");
        for (int32_t b = 0; b < ps->n_bound; b++) {
            const rf_bound_t *bd = &ps->bound[b];
            rf__jw_printf(o, "%s{\"node\": ", b ? ", " : "");
            rf__jw_str(o, p->nodes[bd->node].name);
            if (bd->ranks) {
                rf__jw_printf(o, ", \"ranks\": [");
                for (int32_t k = 0; k < bd->count; k++)
                    rf__jw_printf(o, "%s%d", k ? ", " : "", (int)bd->ranks[k]);
                rf__jw_printf(o, "]}");
            } else {
                rf__jw_printf(o, ", \"count\": %d}", (int)bd->count);
            }
        }
        rf__jw_printf(o, "]");
    }
    rf__jw_printf(o, "}");
}

static void s_w_run_pod_set(rf__jw_t *o, const rf_problem_t *p, const char *name, const int64_t *req,
                            const rf_run_placement_t *pl, int32_t n_pl)
{
    rf__jw_printf(o, "{\"name\": ");
    rf__jw_str(o, name);
    s_w_qtys(o, p, "requests", req, true);
    rf__jw_printf(o, ", \"placements\": [");
    for (int32_t i = 0; i < n_pl; i++) {
        rf__jw_printf(o, "%s{\"node\": ", i ? ", " : "");
        rf__jw_str(o, p->nodes[pl[i].node].name);
        rf__jw_printf(o, ", \"count\": %d}", (int)pl[i].count);
    }
    rf__jw_printf(o, "]}");
}

static void s_w_options(rf__jw_t *o, const rf_problem_t *p)
{
    const rf_options_t *op = &p->options;
    rf__jw_printf(o, "  \"options\": {\"mode\": \"%s\", \"time_limit_ms\": %lld, \"threads\": %d, ",
                  op->mode == RF_MODE_GREEDY ? "greedy"
                  : op->mode == RF_MODE_ILP  ? "ilp"
                                             : "auto",
                  (long long)op->time_limit_ms, (int)op->threads);
    rf__jw_printf(
        o, "\"admission\": \"%s\", \"value_resource\": ", op->admission == RF_ADMIT_ORDERED ? "ordered" : "value");
    rf__jw_str(o, op->value_resource_name ? op->value_resource_name : "nvidia.com/gpu");
    rf__jw_printf(o, ", \"preemption\": \"%s\"}\n}\n", op->preemption == RF_PREEMPT_NEVER ? "never" : "lower_priority");
}

rf_status bench_gen_running(const rf_problem_t *p, const bench_run_opts_t *opts, rf__jw_t *out,
                            bench_run_stats_t *stats, rf_error_t *err)
{
    if (!(opts->fill >= 0 && opts->fill <= 1))
        return rf_error_set(err, RF_EINVAL, "", "--fill must be in [0, 1]");
    rf_status st = RF_OK;
    s_fill_t f;
    memset(&f, 0, sizeof(f));
    f.p = p;
    f.R = p->n_resources;
    f.ix_gpu = p->options.value_resource;
    f.ix_cpu = f.ix_mem = -1;
    for (int32_t r = 0; r < p->n_resources; r++) {
        if (strcmp(p->resources[r], "cpu") == 0)
            f.ix_cpu = r;
        else if (strcmp(p->resources[r], "memory") == 0)
            f.ix_mem = r;
    }
    size_t N = (size_t)p->n_nodes;
    f.order = malloc((N ? N : 1) * sizeof(int32_t));
    f.fit = malloc((N ? N : 1) * sizeof(int32_t));
    f.used = malloc((N ? N : 1) * (size_t)f.R * sizeof(int64_t));
    int64_t *reqv = calloc((size_t)f.R, sizeof(int64_t));
    if (!f.order || !f.fit || !f.used || !reqv) {
        st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    bench_run_stats_t rs = {0};
    int64_t gpus_total = 0;
    for (int32_t n = 0; n < p->n_nodes; n++) {
        const rf_node_t *node = &p->nodes[n];
        memcpy(&f.used[(size_t)n * (size_t)f.R], node->used, (size_t)f.R * sizeof(int64_t));
        bool labelled = true;
        for (int32_t l = 0; l < p->n_levels && labelled; l++)
            labelled = rf_node_label(node, p->levels[l]) != NULL;
        if (!labelled || node->unschedulable)
            continue;
        f.order[f.n_order++] = n;
        if (f.ix_gpu >= 0 && node->allocatable[f.ix_gpu] != RF_QTY_UNLIMITED) {
            gpus_total += node->allocatable[f.ix_gpu];
            int64_t free_g = node->allocatable[f.ix_gpu] - node->used[f.ix_gpu];
            rs.gpus_free_before += free_g > 0 ? free_g : 0;
        }
    }
    s_node_path_t *paths = malloc((size_t)(f.n_order ? f.n_order : 1) * sizeof(*paths));
    if (!paths) {
        st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    for (int32_t i = 0; i < f.n_order; i++)
        paths[i] = (s_node_path_t){p, f.order[i]};
    qsort(paths, (size_t)f.n_order, sizeof(*paths), s_cmp_node_path);
    for (int32_t i = 0; i < f.n_order; i++)
        f.order[i] = paths[i].node;
    free(paths);
    for (int32_t l = 0; l < p->n_levels; l++) {
        f.dom[l] = malloc((size_t)(f.n_order ? f.n_order : 1) * sizeof(int32_t));
        if (!f.dom[l]) {
            st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
        for (int32_t i = 0; i < f.n_order; i++) {
            bool same = i > 0;
            for (int32_t k = 0; same && k <= l; k++)
                same = strcmp(rf_node_label(&p->nodes[f.order[i]], p->levels[k]),
                              rf_node_label(&p->nodes[f.order[i - 1]], p->levels[k])) == 0;
            f.dom[l][i] = i == 0 ? 0 : f.dom[l][i - 1] + !same;
        }
    }

    s_rng_t rng;
    s_rng_seed(&rng, opts->seed ^ UINT64_C(0x72756e6e696e6721)); /* a stream of its own: "running!" */
    int32_t cap = S_TAIL_MIN;
    while (cap * 2 <= S_TAIL_MAX && (int64_t)cap * 2 * 8 <= gpus_total)
        cap *= 2;
    int64_t target = (int64_t)(opts->fill * (double)rs.gpus_free_before);
    int32_t misses = 0;
    while (f.ix_gpu >= 0 && rs.running_gpus < target && misses < S_RUN_GIVE_UP && f.n_runs < S_RUN_MAX) {
        int32_t gpus = s_draw_body(&rng);
        if (s_rng_chance(&rng, 1, S_RUN_TAIL_ONE_IN))
            gpus = s_draw_tail(&rng, cap);
        uint64_t u_prio = s_rng_below(&rng, 3);
        bool preemptible = !s_rng_chance(&rng, 1, 10);
        uint64_t u_team = s_rng_below(&rng, sizeof(s_teams) / sizeof(s_teams[0]));
        int32_t per_pod = gpus < S_GPUS_PER_HOST ? gpus : S_GPUS_PER_HOST;
        int32_t pods = gpus < S_GPUS_PER_HOST ? 1 : gpus / S_GPUS_PER_HOST;
        f.req[0] = per_pod;
        f.req[1] = (int64_t)per_pod * 12 * 1000;
        f.req[2] = (int64_t)per_pod * 96 * 1024 * 1024 * 1024;
        int32_t first = 0, n_pl = 0;
        int placed = s_fill_place(&f, pods, &first, &n_pl);
        if (placed < 0) {
            st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
        if (placed == 0) {
            misses++;
            continue;
        }
        misses = 0;
        if (f.n_runs == f.cap_runs) {
            s_run_t *g = rf__grow(f.runs, &f.cap_runs, (int64_t)f.n_runs + 1, 256, sizeof(*g));
            if (!g) {
                st = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                goto done;
            }
            f.runs = g;
        }
        s_run_t *run = &f.runs[f.n_runs++];
        run->first = first;
        run->n = n_pl;
        run->gpus_per_pod = per_pod;
        run->pods = pods;
        run->priority = u_prio < 2 ? 0 : 100;
        run->preemptible = preemptible;
        run->team = (int32_t)u_team;
        rs.running++;
        rs.not_preemptible += !preemptible;
        rs.running_pods += pods;
        rs.running_gpus += gpus;
        if (run->priority == 0)
            rs.running_gpus_low += gpus;
    }
    for (int32_t i = 0; i < f.n_order; i++) {
        int32_t n = f.order[i];
        if (f.ix_gpu >= 0 && p->nodes[n].allocatable[f.ix_gpu] != RF_QTY_UNLIMITED) {
            int64_t free_g = p->nodes[n].allocatable[f.ix_gpu] - f.used[(size_t)n * (size_t)f.R + (size_t)f.ix_gpu];
            rs.gpus_free_after += free_g > 0 ? free_g : 0;
        }
    }

    /* The problem: cluster (used raised), gangs as they were, running, options. */
    s_w_nodes(out, p, f.used);
    rf__jw_printf(out, "  \"gangs\": [\n");
    for (int32_t g = 0; g < p->n_gangs; g++) {
        const rf_gang_t *gang = &p->gangs[g];
        rf__jw_printf(out, "    {\"name\": ");
        rf__jw_str(out, gang->name);
        rf__jw_printf(out, ", \"priority\": %lld, \"bandwidth\": %.17g", (long long)gang->priority, gang->bandwidth);
        s_w_topology(out, p, gang->topology);
        rf__jw_printf(out, ",\n     \"pod_sets\": [");
        for (int32_t j = 0; j < gang->n_pod_sets; j++) {
            rf__jw_printf(out, "%s", j ? ", " : "");
            s_w_pod_set(out, p, &gang->pod_sets[j]);
        }
        rf__jw_printf(out, "]}%s\n", g + 1 < p->n_gangs ? "," : "");
    }
    rf__jw_printf(out, "  ],\n  \"running\": [\n");
    int32_t n_all = p->n_running + f.n_runs;
    for (int32_t v = 0; v < p->n_running; v++) { /* the base problem's own, first */
        const rf_running_t *rg = &p->running[v];
        rf__jw_printf(out, "    {\"name\": ");
        rf__jw_str(out, rg->name);
        rf__jw_printf(out, ", \"priority\": %lld, \"bandwidth\": %.17g, \"preemptible\": %s,\n     \"pod_sets\": [",
                      (long long)rg->priority, rg->bandwidth, rg->preemptible ? "true" : "false");
        for (int32_t j = 0; j < rg->n_pod_sets; j++) {
            rf__jw_printf(out, "%s", j ? ", " : "");
            s_w_run_pod_set(out, p, rg->pod_sets[j].name, rg->pod_sets[j].requests, rg->pod_sets[j].placements,
                            rg->pod_sets[j].n_placements);
        }
        rf__jw_printf(out, "]}%s\n", v + 1 < n_all ? "," : "");
    }
    for (int32_t i = 0; i < f.n_runs; i++) {
        const s_run_t *run = &f.runs[i];
        memset(reqv, 0, (size_t)f.R * sizeof(int64_t));
        if (f.ix_gpu >= 0)
            reqv[f.ix_gpu] = run->gpus_per_pod;
        if (f.ix_cpu >= 0)
            reqv[f.ix_cpu] = (int64_t)run->gpus_per_pod * 12 * 1000;
        if (f.ix_mem >= 0)
            reqv[f.ix_mem] = (int64_t)run->gpus_per_pod * 96 * 1024 * 1024 * 1024;
        rf__jw_printf(out,
                      "    {\"name\": \"%s/run-%05d\", \"priority\": %lld, \"preemptible\": %s,\n     \"pod_sets\": [",
                      s_teams[run->team], (int)i, (long long)run->priority, run->preemptible ? "true" : "false");
        s_w_run_pod_set(out, p, "workers", reqv, &f.pl[run->first], run->n);
        rf__jw_printf(out, "]}%s\n", p->n_running + i + 1 < n_all ? "," : "");
    }
    rf__jw_printf(out, "  ],\n");
    s_w_options(out, p);
    if (out->oom) {
        st = rf_error_set(err, RF_ENOMEM, "", "out of memory writing the problem");
        goto done;
    }
    if (stats)
        *stats = rs;
done:
    free(f.order);
    free(f.fit);
    free(f.used);
    free(f.pl);
    free(f.runs);
    for (int32_t l = 0; l < RF_MAX_LEVELS; l++)
        free(f.dom[l]);
    free(reqv);
    return st;
}
