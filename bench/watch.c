/* bench/watch.c: `rackfit-bench watch`: how fast rackfit-watch binds a gang.
 *
 *   rackfit-bench watch [--sizes 8,128,1024] [--runs N] [--qps Q --burst B] [--concurrency C]
 *                       [--pair N] [--emulator PATH] [--bin DIR] [--out FILE]
 *
 * Starts the API server emulator (tests/emulator/kube_emulator.py, Python),
 * rackfitd and rackfit-watch on free loopback ports, creates 3 blocks x 8
 * racks x 16 hosts (384 nodes, 8 GPUs each), then for each gang size and
 * run: creates a PodGroup and its pods (1 GPU each, required topology: the
 * rack for gangs that fit one, else the block), waits until every pod is
 * bound, and reads from the emulator the time its watch recorded the gang's
 * last pod (ADDED) and the time of the last successful binding (201). The
 * difference is the figure: it covers the watcher's debounce, building the
 * problem, the solve and the bindings (each carrying its intent). The pods are then
 * deleted before the next run. With --pair N, two gangs of N pods are then
 * created together, --runs times, and each one's figure reported (binder
 * threads bind them at once under the one shared rate limit). Prints a markdown table (and writes it to
 * --out). The emulator is Python: its own per-request cost is part of the
 * figure, so it is an upper bound for a real API server with room to spare. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jw.h"
#include "kube_http.h"

typedef struct {
    const char *sizes;
    int runs;
    double qps, burst;
    int concurrency;
    const char *emulator;
    char bin[1024];
    const char *out;
    int pair; /* > 0: also two gangs of this many pods at once */
} s_opts_t;

static void s_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rackfit-bench watch: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static int s_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
        getsockname(fd, (struct sockaddr *)&sin, &len) != 0)
        s_die("no free port: %s", strerror(errno));
    int port = ntohs(sin.sin_port);
    close(fd);
    return port;
}

static pid_t s_spawn(char *const argv[], const char *log)
{
    pid_t pid = fork();
    if (pid < 0)
        s_die("fork: %s", strerror(errno));
    if (pid == 0) {
        FILE *f = freopen(log, "w", stderr);
        if (!f)
            _exit(127);
        if (dup2(fileno(stderr), fileno(stdout)) < 0)
            _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static bool s_log_has(const char *log, const char *what, double seconds)
{
    double end = rf__now() + seconds;
    while (rf__now() < end) {
        FILE *f = fopen(log, "r");
        char line[4096];
        bool hit = false;
        while (f && fgets(line, sizeof line, f))
            hit |= strstr(line, what) != NULL;
        if (f)
            fclose(f);
        if (hit)
            return true;
        usleep(50000);
    }
    return false;
}

static void s_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 50; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        usleep(100000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Run many requests, all of which must answer 2xx (or 404 for deletes). */
static void s_batch(rf__kmulti_t *m, rf__kcall_t *calls, int n);

/* s_batch, then free the calls and their n strings (bodies or paths). */
static void s_batch_free(rf__kmulti_t *m, rf__kcall_t *calls, char **strings, int n)
{
    s_batch(m, calls, n);
    for (int i = 0; i < n; i++)
        free(strings[i]);
    free(strings);
    free(calls);
}

static void s_batch(rf__kmulti_t *m, rf__kcall_t *calls, int n)
{
    rf_error_t err;
    rf__kube_batch(m, calls, n, NULL, 30000, NULL, &err);
    for (int i = 0; i < n; i++) {
        long st = calls[i].resp.status;
        if (calls[i].transport != RF_OK || (st / 100 != 2 && !(st == 404 && strcmp(calls[i].method, "DELETE") == 0)))
            s_die("%s %s: %s %ld %.200s", calls[i].method, calls[i].path, rf_status_message(calls[i].transport), st,
                  calls[i].resp.body ? calls[i].resp.body : "");
        rf__kresp_fini(&calls[i].resp);
    }
}

static char *s_strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = NULL;
    if (vasprintf(&p, fmt, ap) < 0)
        p = NULL;
    va_end(ap);
    if (!p)
        s_die("out of memory");
    return p;
}

static void s_nodes(rf__kmulti_t *m)
{
    enum { B = 3, R = 8, H = 16 };
    rf__kcall_t *calls = calloc(B * R * H, sizeof *calls);
    char **bodies = calloc(B * R * H, sizeof *bodies);
    int n = 0;
    for (int b = 0; b < B; b++)
        for (int r = 0; r < R; r++)
            for (int h = 0; h < H; h++, n++) {
                bodies[n] = s_strf("{\"metadata\":{\"name\":\"b%d-r%d-h%d\",\"labels\":{\"example.com/block\":\"b%d\","
                                   "\"example.com/rack\":\"r%d\",\"kubernetes.io/hostname\":\"b%d-r%d-h%d\"}},"
                                   "\"spec\":{},\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\","
                                   "\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\","
                                   "\"status\":\"True\"}]}}",
                                   b, r, h, b, r, b, r, h);
                calls[n] = (rf__kcall_t){
                    .method = "POST", .path = "/api/v1/nodes", .ctype = "application/json", .body = bodies[n]};
            }
    s_batch_free(m, calls, bodies, n);
}

/* Create the PodGroup and its pods (1 GPU each, the rack required for gangs that fit one, else the block). */
static void s_create(rf__kmulti_t *m, const char *name, int size)
{
    const char *level = size <= 128 ? "example.com/rack" : "example.com/block";
    rf__kcall_t *calls = calloc((size_t)size + 1, sizeof *calls);
    char **bodies = calloc((size_t)size + 1, sizeof *bodies);
    char *pg =
        s_strf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"bench\"},\"spec\":{\"minMember\":%d}}", name, size);
    rf__kcall_t pgc = {.method = "POST",
                       .path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/bench/podgroups",
                       .ctype = "application/json",
                       .body = pg};
    s_batch(m, &pgc, 1);
    free(pg);
    for (int i = 0; i < size; i++) {
        bodies[i] = s_strf(
            "{\"metadata\":{\"name\":\"%s-%d\",\"namespace\":\"bench\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":"
            "\"%s\",\"batch.kubernetes.io/job-completion-index\":\"%d\"},\"annotations\":{\"kueue.x-k8s.io/"
            "podset-required-topology\":\"%s\"}},\"spec\":{\"schedulerName\":\"rackfit\",\"containers\":[{\"name\":"
            "\"m\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/"
            "gpu\":\"1\"}}}]}}",
            name, i, name, i, level);
        calls[i] = (rf__kcall_t){
            .method = "POST", .path = "/api/v1/namespaces/bench/pods", .ctype = "application/json", .body = bodies[i]};
    }
    s_batch_free(m, calls, bodies, size);
}

/* The emulator's clock marks of gang `name`: how many pods are bound, the
 * last binding, the last pod's creation. false when the state is unreadable. */
static bool s_marks(rf__kconn_t *conn, const char *name, int *bound, double *last_bind, double *last_create)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s-", name);
    rf__kresp_t r;
    rf_error_t err;
    if (rf__kube_call(conn, "GET", "/emu/state", NULL, NULL, 30000, &r, &err) != RF_OK || r.status != 200) {
        rf__kresp_fini(&r);
        return false;
    }
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    bool ok = a && rf__kube_json(r.body, r.len, a, &doc, &err) == RF_OK;
    *bound = 0;
    *last_bind = *last_create = 0;
    const char *keys[2] = {"bindings", "created"};
    for (int k = 0; ok && k < 2; k++) {
        const rf_doc_t *xs = rf__doc_get(doc, keys[k]);
        for (uint32_t i = 0; xs && i < xs->len; i++) {
            const rf_doc_t *nm = rf__doc_get(&xs->u.items[i], "name"), *t = rf__doc_get(&xs->u.items[i], "t");
            if (!nm || nm->type != RF_DOC_STR || strncmp(nm->u.s, prefix, strlen(prefix)) != 0 || !t ||
                t->type != RF_DOC_FLOAT)
                continue;
            double *last = k == 0 ? last_bind : last_create;
            *bound += k == 0;
            *last = t->u.f > *last ? t->u.f : *last;
        }
    }
    rf__arena_destroy(&a);
    rf__kresp_fini(&r);
    return ok;
}

/* Wait for every binding of the gang; its last binding and last creation (emulator clock, s). */
static void s_wait_bound(rf__kconn_t *conn, const char *name, int size, double *last_bind, double *last_create)
{
    double deadline = rf__now() + 300;
    int bound = 0;
    while (rf__now() < deadline) {
        usleep(100000);
        if (s_marks(conn, name, &bound, last_bind, last_create) && bound >= size)
            return;
    }
    s_die("gang %s (%d pods) was not bound within 300 s", name, size);
}

/* Delete the gang's pods once the kubelet has admitted them (else the watcher, following the gang, rolls it back). */
static void s_delete(rf__kmulti_t *m, const char *name, int size)
{
    usleep(300000);
    rf__kcall_t *calls = calloc((size_t)size + 1, sizeof *calls);
    char **paths = calloc((size_t)size + 1, sizeof *paths);
    for (int i = 0; i < size; i++) {
        paths[i] = s_strf("/api/v1/namespaces/bench/pods/%s-%d", name, i);
        calls[i] = (rf__kcall_t){.method = "DELETE", .path = paths[i]};
    }
    s_batch_free(m, calls, paths, size);
    usleep(500000); /* graceful deletions finish (the emulator's grace is 0.2 s) */
}

/* Create the gang; then wait for every binding; return last bind - last create (ms). */
static double s_one(rf__kmulti_t *m, rf__kconn_t *conn, const char *name, int size)
{
    double last_bind, last_create;
    s_create(m, name, size);
    s_wait_bound(conn, name, size, &last_bind, &last_create);
    s_delete(m, name, size);
    return (last_bind - last_create) * 1e3;
}

/* Two gangs of `size` pods created together: each one's last pod -> last binding (ms). */
static void s_pair(rf__kmulti_t *m, rf__kconn_t *conn, int seq, int size, double ms[2])
{
    char names[2][64];
    double bind[2], create[2];
    for (int k = 0; k < 2; k++) {
        snprintf(names[k], sizeof names[k], "p%d-%d-%c", size, seq, 'a' + k);
        s_create(m, names[k], size);
    }
    for (int k = 0; k < 2; k++)
        s_wait_bound(conn, names[k], size, &bind[k], &create[k]);
    for (int k = 0; k < 2; k++) {
        ms[k] = (bind[k] - create[k]) * 1e3;
        s_delete(m, names[k], size);
    }
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The flags of `rackfit-bench watch` into `o` (defaults first). */
static void s_parse(int argc, char **argv, s_opts_t *out)
{
    s_opts_t o = {.sizes = "8,128,1024",
                  .runs = 3,
                  .qps = 5000,
                  .burst = 1000,
                  .concurrency = 64,
                  .emulator = "tests/emulator/kube_emulator.py"};
    char self[1024];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sl > 0 ? sl : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(o.bin, sizeof o.bin, "%s", self[0] ? self : ".");
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            s_die("%s needs a value", a);
        if (strcmp(a, "--sizes") == 0)
            o.sizes = v;
        else if (strcmp(a, "--runs") == 0)
            o.runs = atoi(v);
        else if (strcmp(a, "--qps") == 0)
            o.qps = atof(v);
        else if (strcmp(a, "--burst") == 0)
            o.burst = atof(v);
        else if (strcmp(a, "--concurrency") == 0)
            o.concurrency = atoi(v);
        else if (strcmp(a, "--emulator") == 0)
            o.emulator = v;
        else if (strcmp(a, "--bin") == 0)
            snprintf(o.bin, sizeof o.bin, "%s", v);
        else if (strcmp(a, "--out") == 0)
            o.out = v;
        else if (strcmp(a, "--pair") == 0)
            o.pair = atoi(v);
        else
            s_die("unknown flag %s", a);
        i++;
    }
    if (o.runs < 1)
        o.runs = 1;
    *out = o;
}

/* Each gang size `o->runs` times, then the pairs: the Markdown table rows into `out`. */
static void s_measure(const s_opts_t *o, rf__kmulti_t *m, rf__kconn_t *conn, rf__jw_t *out)
{
    rf__jw_printf(out, "| gang | runs | last pod's watch event -> last binding: median | min | max | bindings "
                       "(requests) | client limit |\n|---|---|---|---|---|---|---|\n");
    char *sizes = strdup(o->sizes);
    int seq = 0;
    for (char *save = NULL, *t = strtok_r(sizes, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int size = atoi(t);
        if (size < 1 || size > 1024)
            s_die("--sizes: %s is not in 1..1024", t);
        double *v = calloc((size_t)o->runs, sizeof *v);
        for (int r = 0; r < o->runs; r++) {
            char name[64];
            snprintf(name, sizeof name, "g%d-%d", size, seq++);
            v[r] = s_one(m, conn, name, size);
            fprintf(stderr, "rackfit-bench watch: %d pods: %.1f ms\n", size, v[r]);
        }
        qsort(v, (size_t)o->runs, sizeof *v, s_cmp);
        double med = o->runs % 2 ? v[o->runs / 2] : (v[o->runs / 2 - 1] + v[o->runs / 2]) / 2;
        rf__jw_printf(out, "| %d pods | %d | %.0f ms | %.0f ms | %.0f ms | %d | %g/s, burst %g, %d in flight |\n", size,
                      o->runs, med, v[0], v[o->runs - 1], size, o->qps, o->burst, o->concurrency);
        free(v);
    }
    free(sizes);
    for (int r = 0; o->pair > 0 && r < o->runs; r++) {
        double ms[2];
        s_pair(m, conn, r, o->pair, ms);
        fprintf(stderr, "rackfit-bench watch: two gangs of %d pods at once: %.1f ms and %.1f ms\n", o->pair, ms[0],
                ms[1]);
        rf__jw_printf(out,
                      "| 2 x %d pods at once (run %d) | 1 | %.0f ms and %.0f ms | | | %d | %g/s, burst %g, %d in "
                      "flight |\n",
                      o->pair, r + 1, ms[0], ms[1], 2 * o->pair, o->qps, o->burst, o->concurrency);
    }
}

int bench_watch_main(int argc, char **argv);
int bench_watch_main(int argc, char **argv)
{
    s_opts_t o;
    s_parse(argc, argv, &o);
    char dir[] = "/tmp/rackfit-bench-watch.XXXXXX";
    if (!mkdtemp(dir))
        s_die("mkdtemp: %s", strerror(errno));
    int eport = s_free_port(), sport = s_free_port();
    char eport_s[16], url[64], endpoint[64], log_e[256], log_s[256], log_w[256], kc[256], qps[32], burst[32], conc[32],
        rfd[1100], watch[1100];
    snprintf(eport_s, sizeof eport_s, "%d", eport);
    snprintf(url, sizeof url, "http://127.0.0.1:%d", eport);
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", sport);
    snprintf(log_e, sizeof log_e, "%s/emulator.log", dir);
    snprintf(log_s, sizeof log_s, "%s/rackfitd.log", dir);
    snprintf(log_w, sizeof log_w, "%s/watch.log", dir);
    snprintf(kc, sizeof kc, "%s/kubeconfig", dir);
    snprintf(qps, sizeof qps, "%g", o.qps);
    snprintf(burst, sizeof burst, "%g", o.burst);
    snprintf(conc, sizeof conc, "%d", o.concurrency);
    snprintf(rfd, sizeof rfd, "%s/rackfitd", o.bin);
    snprintf(watch, sizeof watch, "%s/rackfit-watch", o.bin);
    FILE *f = fopen(kc, "w");
    if (!f)
        s_die("%s: %s", kc, strerror(errno));
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: e\ncontexts:\n- name: e\n  context: {cluster: e, user: "
            "e, namespace: bench}\nclusters:\n- name: e\n  cluster: {server: \"%s\"}\nusers:\n- name: e\n  user: "
            "{token: bench}\n",
            url);
    fclose(f);
    char *eargv[] = {"python3", (char *)o.emulator, "--port", eport_s, "--token", "bench", NULL};
    pid_t epid = s_spawn(eargv, log_e);
    char *sargv[] = {rfd, "--listen", endpoint, NULL};
    pid_t spid = s_spawn(sargv, log_s);
    if (!s_log_has(log_e, "listening", 10) || !s_log_has(log_s, "ready", 10)) {
        s_stop(epid);
        s_stop(spid);
        s_die("the emulator or rackfitd did not start (logs in %s)", dir);
    }
    rf_error_t err;
    rf__kube_global_init(&err);
    rf__kubeconfig_t kcfg = {.server = url, .token = "bench"};
    rf__kube_t *kube = rf__kube_new(&kcfg, &err);
    rf__kmulti_t *m = rf__kmulti_new(kube, 32);
    rf__kconn_t *conn = rf__kconn_new(kube);
    s_nodes(m);
    char *wargv[] = {watch,
                     "--kubeconfig",
                     kc,
                     "--solver",
                     endpoint,
                     "--scheduler-name",
                     "rackfit",
                     "--levels",
                     "example.com/block,example.com/rack,kubernetes.io/hostname",
                     "--qps",
                     qps,
                     "--burst",
                     burst,
                     "--concurrency",
                     conc,
                     "--mode",
                     "greedy",
                     "--leader-elect",
                     "false",
                     NULL};
    pid_t wpid = s_spawn(wargv, log_w);
    if (!s_log_has(log_w, "checking the intents", 20)) {
        s_stop(wpid);
        s_stop(spid);
        s_stop(epid);
        s_die("rackfit-watch did not sync (logs in %s)", dir);
    }
    rf__jw_t out;
    rf__jw_init(&out);
    s_measure(&o, m, conn, &out);
    s_stop(wpid);
    s_stop(spid);
    s_stop(epid);
    fputs(out.p, stdout);
    if (o.out) {
        FILE *of = fopen(o.out, "w");
        if (of) {
            fputs(out.p, of);
            fclose(of);
        }
    }
    rf__jw_fini(&out);
    rf__kconn_destroy(&conn);
    rf__kmulti_destroy(&m);
    rf__kube_destroy(&kube);
    rf__kube_global_fini();
    return 0;
}
