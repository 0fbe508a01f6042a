/* probe/lldp.c: lldpcli's JSON (json0 and json shapes) into LLDP neighbour
 * records, and running lldpcli on a live node (probe/lldp.h).
 *
 * Shapes handled (lldpd 1.0.x, see ../shared/notes/topology-discovery.md
 * 2.1): `lldp` is an array (json0) or an object; `interface` an array of
 * {"name": ...} objects (json0), an object keyed by interface name, or an
 * array of such one-key objects; `chassis` an array holding {id, name, ...}
 * (json0), an object keyed by the System Name, or {id, descr} when no name
 * was sent; any scalar may be a string, {"value": s} or [{"value": s}]. */
#include "lldp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "clock.h"
#include "doc.h"
#include "file.h"
#include "json.h"

extern char **environ;

static const rf_doc_t *s_first(const rf_doc_t *v)
{
    if (v && v->type == RF_DOC_ARRAY)
        return v->len ? &v->u.items[0] : NULL;
    return v;
}

static const rf_doc_t *s_get(const rf_doc_t *v, const char *key)
{
    v = s_first(v);
    return v && v->type == RF_DOC_MAP ? rf__doc_get(v, key) : NULL;
}

static const char *s_str(const rf_doc_t *v)
{
    v = s_first(v);
    if (!v)
        return "";
    if (v->type == RF_DOC_STR)
        return v->u.s;
    if (v->type == RF_DOC_MAP)
        return s_str(rf__doc_get(v, "value"));
    return "";
}

static void s_copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static rf_status s_neighbour(const char *ifname, const rf_doc_t *body, rf_probe_facts_t *f, rf_error_t *err)
{
    if (f->n_lldp >= RF_PROBE_MAX_LLDP)
        return rf__src_fail(&f->lldp, RF_ELIMIT, err, "LLDP: more than %d neighbours", RF_PROBE_MAX_LLDP);
    rf_probe_lldp_t *n = &f->lldp_nbrs[f->n_lldp++];
    memset(n, 0, sizeof *n);
    s_copy(n->ifname, sizeof n->ifname, ifname);
    const rf_doc_t *c = s_first(s_get(body, "chassis"));
    if (c && c->type == RF_DOC_MAP && !rf__doc_get(c, "id") && !rf__doc_get(c, "name") && c->len == 1) {
        s_copy(n->chassis_name, sizeof n->chassis_name, c->u.pairs[0].key); /* json: keyed by System Name */
        c = &c->u.pairs[0].value;
    } else
        s_copy(n->chassis_name, sizeof n->chassis_name, s_str(s_get(c, "name")));
    const rf_doc_t *id = s_get(c, "id");
    s_copy(n->chassis_id_type, sizeof n->chassis_id_type, s_str(s_get(id, "type")));
    s_copy(n->chassis_id, sizeof n->chassis_id, s_str(id));
    const rf_doc_t *caps = s_get(c, "capability");
    if (caps) {
        n->caps_known = true;
        uint32_t k = caps->type == RF_DOC_ARRAY ? caps->len : 1;
        for (uint32_t i = 0; i < k; i++) {
            const rf_doc_t *cap = caps->type == RF_DOC_ARRAY ? &caps->u.items[i] : caps;
            const char *type = s_str(s_get(cap, "type"));
            const rf_doc_t *en = s_get(cap, "enabled");
            if ((!strcmp(type, "Bridge") || !strcmp(type, "Router")) && en && en->type == RF_DOC_BOOL && en->u.b)
                n->bridge = true;
        }
    }
    const rf_doc_t *port = s_first(s_get(body, "port")), *pid = s_get(port, "id");
    s_copy(n->port_id_type, sizeof n->port_id_type, s_str(s_get(pid, "type")));
    s_copy(n->port_id, sizeof n->port_id, s_str(pid));
    s_copy(n->port_descr, sizeof n->port_descr, s_str(s_get(port, "descr")));
    return RF_OK;
}

/* One entry of `interface`: {"name": ..., ...} (json0) or {"<ifname>": {...}, ...}. */
static rf_status s_interface(const rf_doc_t *it, rf_probe_facts_t *f, rf_error_t *err)
{
    if (!it || it->type != RF_DOC_MAP)
        return rf__src_fail(&f->lldp, RF_EPARSE, err, "LLDP: an interface entry is not an object");
    const rf_doc_t *name = rf__doc_get(it, "name");
    if (name && (name->type == RF_DOC_STR || name->type == RF_DOC_ARRAY))
        return s_neighbour(s_str(name), it, f, err);
    for (uint32_t i = 0; i < it->len; i++)
        RF_CALL(s_neighbour(it->u.pairs[i].key, &it->u.pairs[i].value, f, err));
    return RF_OK;
}

rf_status rf__lldp_parse(const char *text, size_t len, const char *origin, rf_probe_facts_t *f, rf_error_t *err)
{
    f->n_lldp = 0;
    s_copy(f->lldp.origin, sizeof f->lldp.origin, origin);
    rf_limits_t lim;
    rf_limits_default(&lim);
    lim.max_input_bytes = RF_PROBE_MAX_LLDP_BYTES;
    lim.max_depth = 64;
    lim.max_string = 1 << 16;
    rf__arena_t *arena = rf__arena_new(0);
    if (!arena)
        return rf__src_fail(&f->lldp, RF_ENOMEM, err, "LLDP: out of memory");
    rf_doc_t *root = NULL;
    rf_status rc = rf__json_parse(text, len, &lim, arena, &root, err);
    if (rc != RF_OK) {
        rc = rf__src_fail(&f->lldp, rc, err, "LLDP %s: %s", origin, err->message);
        goto out;
    }
    const rf_doc_t *lldp = root && root->type == RF_DOC_MAP ? rf__doc_get(root, "lldp") : NULL;
    if (!lldp) {
        rc = rf__src_fail(&f->lldp, RF_EPARSE, err, "LLDP %s: no \"lldp\" key: not lldpcli JSON output", origin);
        goto out;
    }
    const rf_doc_t *ifs = s_get(lldp, "interface");
    uint32_t k = !ifs ? 0 : ifs->type == RF_DOC_ARRAY ? ifs->len : 1;
    for (uint32_t i = 0; i < k && rc == RF_OK; i++)
        rc = s_interface(ifs->type == RF_DOC_ARRAY ? &ifs->u.items[i] : ifs, f, err);
    if (rc == RF_OK)
        f->lldp.state = RF_SRC_OK;
    else
        f->n_lldp = 0;
out:
    rf__arena_destroy(&arena);
    return rc;
}

rf_status rf__lldp_read_file(const char *path, rf_probe_facts_t *f, rf_error_t *err)
{
    char *text = NULL;
    size_t len = 0;
    s_copy(f->lldp.origin, sizeof f->lldp.origin, path);
    rf_status rc = rf__read_file(path, RF_PROBE_MAX_LLDP_BYTES, &text, &len, err);
    if (rc != RF_OK)
        return rf__src_fail(&f->lldp, rc, err, "LLDP: %s", err->message);
    rc = rf__lldp_parse(text, len, path, f, err);
    free(text);
    return rc;
}

/* Read all of `fd` into a malloc'ed buffer until EOF or the deadline. */
static rf_status s_slurp(int fd, double deadline_ms, char **out, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return RF_ENOMEM;
    for (;;) {
        double left = deadline_ms - rf_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) == 0) {
            free(buf);
            return RF_ETIMEOUT;
        }
        if (n == cap) {
            if (cap >= RF_PROBE_MAX_LLDP_BYTES) {
                free(buf);
                return RF_ELIMIT;
            }
            char *b = realloc(buf, cap * 2 + 1);
            if (!b) {
                free(buf);
                return RF_ENOMEM;
            }
            buf = b;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return RF_OK;
}

rf_status rf__lldp_live(const char *lldpcli, const char *socket, long timeout_ms, rf_probe_facts_t *f, rf_error_t *err)
{
    char origin[256];
    snprintf(origin, sizeof origin, "%s%s%s -f json0 show neighbors details", lldpcli, socket ? " -u " : "",
             socket ? socket : "");
    s_copy(f->lldp.origin, sizeof f->lldp.origin, origin);
    int fds[2];
    if (pipe(fds) != 0)
        return rf__src_fail(&f->lldp, RF_EIO, err, "LLDP: pipe: %s", strerror(errno));
    char *argv[9];
    int a = 0;
    argv[a++] = (char *)lldpcli;
    if (socket) {
        argv[a++] = "-u";
        argv[a++] = (char *)socket;
    }
    argv[a++] = "-f";
    argv[a++] = "json0";
    argv[a++] = "show";
    argv[a++] = "neighbors";
    argv[a++] = "details";
    argv[a] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int e = posix_spawnp(&pid, lldpcli, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (e != 0) {
        close(fds[0]);
        return rf__src_fail(&f->lldp, RF_EIO, err, "LLDP: cannot run %s: %s", lldpcli, strerror(e));
    }
    char *text = NULL;
    size_t len = 0;
    rf_status rc = s_slurp(fds[0], rf_now_ms() + (double)timeout_ms, &text, &len);
    close(fds[0]);
    if (rc != RF_OK)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc != RF_OK)
        return rf__src_fail(&f->lldp, rc, err, "LLDP: %s gave no complete answer within %ld ms (%s)", origin,
                            timeout_ms, rf_status_message(rc));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(text);
        return rf__src_fail(&f->lldp, RF_EIO, err,
                            "LLDP: %s failed (exit status %d): is lldpd running on the host, and its control "
                            "socket mounted and readable?",
                            origin, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    rc = rf__lldp_parse(text, len, origin, f, err);
    free(text);
    return rc;
}
