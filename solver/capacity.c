/* solver/capacity.c: per-shape capacity roll-ups over the topology tree
 * (see capacity.h): building them, copying them, and mending them when one
 * node's free capacity changes. */
#include "capacity.h"

#include <stdlib.h>
#include <string.h>

void rf__cap_init(rf__cap_t *cap, const rf__tree_t *tree, int32_t n_resources)
{
    memset(cap, 0, sizeof *cap);
    cap->tree = tree;
    cap->L = tree->n_levels;
    cap->N = tree->n_nodes;
    cap->R = n_resources;
    cap->D = tree->n_domains;
    for (int32_t l = 0; l < cap->L; l++)
        cap->bucketed[l] = tree->level_start[l + 1] - tree->level_start[l] > RF__BUCKET_LEVEL;
}

int32_t rf__cap_fit(const rf__cap_t *cap, const rf__shape_t *sh, int32_t n)
{
    if (!sh->ok[n])
        return 0;
    const int64_t *fr = &cap->free[(int64_t)n * cap->R];
    int64_t best = RF__FIT_CAP;
    if (sh->n_used <= 16) {
        for (int32_t i = 0; i < sh->n_used; i++) {
            int32_t r = sh->used_res[i];
            if (fr[r] == RF_QTY_UNLIMITED)
                continue;
            if (fr[r] < sh->req[r])
                return 0;
            int64_t f = fr[r] / sh->req[r];
            if (f < best)
                best = f;
        }
        return (int32_t)best;
    }
    for (int32_t r = 0; r < cap->R; r++) {
        int64_t q = sh->req[r];
        if (q <= 0 || fr[r] == RF_QTY_UNLIMITED)
            continue;
        int64_t f = fr[r] / q;
        if (f < best)
            best = f;
    }
    return (int32_t)best;
}

void rf__shape_set(rf__shape_t *sh, const rf__cap_t *cap, const int64_t *req, int32_t elig, const uint8_t *ok)
{
    sh->req = req;
    sh->elig = elig;
    sh->ok = ok;
    sh->n_used = 0;
    for (int32_t r = 0; r < cap->R; r++)
        if (req[r] > 0) {
            if (sh->n_used < 16)
                sh->used_res[sh->n_used] = r;
            sh->n_used++;
        }
}

static rf_status s_alloc(const rf__cap_t *cap, rf__shape_t *sh)
{
    const size_t N = (size_t)cap->N, D = (size_t)cap->D, L = (size_t)cap->L;
    sh->fit = malloc((N + 1) * sizeof *sh->fit);
    sh->cnt = malloc((D + 1) * sizeof *sh->cnt);
    sh->maxfit = malloc((D + 1) * sizeof *sh->maxfit);
    sh->nmax = malloc((D + 1) * sizeof *sh->nmax);
    sh->bnext = malloc((D + 1) * sizeof(int32_t));
    sh->bprev = malloc((D + 1) * sizeof(int32_t));
    sh->bucket = malloc((D + 1) * sizeof(int32_t));
    sh->head = malloc((L * (RF__BUCKETS + 1) + 1) * sizeof(int32_t));
    if (!sh->fit || !sh->cnt || !sh->maxfit || !sh->nmax || !sh->bnext || !sh->bprev || !sh->bucket || !sh->head)
        return RF_ENOMEM;
    return RF_OK;
}

static int32_t s_bucket_of(int64_t cnt)
{
    return cnt <= 0 ? -1 : cnt >= RF__BUCKETS ? RF__BUCKETS : (int32_t)cnt;
}

void rf__shape_index(const rf__cap_t *cap, rf__shape_t *sh)
{
    const rf__tree_t *t = cap->tree;
    memset(sh->head, 0xff, (size_t)cap->L * (RF__BUCKETS + 1) * sizeof(int32_t));
    for (int32_t l = 0; l < cap->L; l++) {
        int32_t *heads = &sh->head[(int64_t)l * (RF__BUCKETS + 1)];
        sh->maxcnt0[l] = 0;
        for (int32_t d = t->level_start[l + 1] - 1; d >= t->level_start[l]; d--) {
            if (sh->cnt[d] > sh->maxcnt0[l])
                sh->maxcnt0[l] = sh->cnt[d];
            int32_t b = cap->bucketed[l] ? s_bucket_of(sh->cnt[d]) : -1;
            sh->bucket[d] = b;
            sh->bprev[d] = -1;
            sh->bnext[d] = b >= 0 ? heads[b] : -1;
            if (b >= 0) {
                if (heads[b] >= 0)
                    sh->bprev[heads[b]] = d;
                heads[b] = d;
            }
        }
    }
}

rf_status rf__shape_build(const rf__cap_t *cap, rf__shape_t *sh)
{
    const rf__tree_t *t = cap->tree;
    const int32_t L = cap->L;
    RF_CALL(s_alloc(cap, sh));
    memset(sh->fit, 0, (size_t)cap->N * sizeof *sh->fit); /* nodes outside the tree take nothing */
    /* leaves from their nodes, then each level from its children (contiguous) */
    for (int32_t d = t->level_start[L - 1]; d < t->level_start[L]; d++) {
        int64_t sum = 0;
        int32_t m = 0, k = 0;
        for (int32_t i = t->node_start[d]; i < t->node_end[d]; i++) {
            int32_t n = t->node_order[i];
            int32_t f = rf__cap_fit(cap, sh, n);
            sh->fit[n] = f;
            sum += f;
            k = f > m ? 1 : k + (f == m);
            m = f > m ? f : m;
        }
        sh->cnt[d] = sum;
        sh->maxfit[d] = m;
        sh->nmax[d] = k;
    }
    for (int32_t l = L - 2; l >= 0; l--)
        for (int32_t d = t->level_start[l]; d < t->level_start[l + 1]; d++) {
            int64_t sum = 0;
            int32_t m = 0, k = 0;
            for (int32_t ch = t->child_start[d]; ch < t->child_start[d] + t->n_children[d]; ch++) {
                int32_t f = sh->maxfit[ch];
                sum += sh->cnt[ch];
                k = f > m ? 1 : k + (f == m);
                m = f > m ? f : m;
            }
            sh->cnt[d] = sum;
            sh->maxfit[d] = m;
            sh->nmax[d] = k;
        }
    rf__shape_index(cap, sh);
    return RF_OK;
}

rf_status rf__shape_copy(const rf__cap_t *cap, rf__shape_t *dst, const rf__shape_t *src)
{
    *dst = *src;
    dst->fit = dst->maxfit = dst->nmax = dst->bnext = dst->bprev = dst->bucket = dst->head = NULL;
    dst->cnt = NULL;
    RF_CALL(s_alloc(cap, dst));
    const size_t N = (size_t)cap->N, D = (size_t)cap->D, L = (size_t)cap->L;
    memcpy(dst->fit, src->fit, N * sizeof *dst->fit);
    memcpy(dst->cnt, src->cnt, D * sizeof *dst->cnt);
    memcpy(dst->maxfit, src->maxfit, D * sizeof *dst->maxfit);
    memcpy(dst->nmax, src->nmax, D * sizeof *dst->nmax);
    memcpy(dst->bnext, src->bnext, D * sizeof(int32_t));
    memcpy(dst->bprev, src->bprev, D * sizeof(int32_t));
    memcpy(dst->bucket, src->bucket, D * sizeof(int32_t));
    memcpy(dst->head, src->head, L * (RF__BUCKETS + 1) * sizeof(int32_t));
    return RF_OK;
}

void rf__shape_fini(rf__shape_t *sh)
{
    free(sh->fit);
    free(sh->cnt);
    free(sh->maxfit);
    free(sh->nmax);
    free(sh->bnext);
    free(sh->bprev);
    free(sh->bucket);
    free(sh->head);
    sh->fit = sh->maxfit = sh->nmax = sh->bnext = sh->bprev = sh->bucket = sh->head = NULL;
    sh->cnt = NULL;
}

static void s_bucket_move(const rf__cap_t *cap, rf__shape_t *sh, int32_t d)
{
    if (!cap->bucketed[cap->tree->level[d]])
        return;
    int32_t nb = s_bucket_of(sh->cnt[d]);
    int32_t ob = sh->bucket[d];
    if (nb == ob)
        return;
    int32_t *heads = &sh->head[(int64_t)cap->tree->level[d] * (RF__BUCKETS + 1)];
    if (ob >= 0) {
        if (sh->bprev[d] >= 0)
            sh->bnext[sh->bprev[d]] = sh->bnext[d];
        else
            heads[ob] = sh->bnext[d];
        if (sh->bnext[d] >= 0)
            sh->bprev[sh->bnext[d]] = sh->bprev[d];
    }
    sh->bucket[d] = nb;
    sh->bprev[d] = sh->bnext[d] = -1;
    if (nb >= 0) {
        sh->bnext[d] = heads[nb];
        if (heads[nb] >= 0)
            sh->bprev[heads[nb]] = d;
        heads[nb] = d;
    }
}

/* Node n's fit went from `old` to sh->fit[n]: mend maxfit (and nmax, how
 * many children hold it) up its path. A rise only raises maxima; a fall
 * rescans a domain only when its last holder of the maximum fell. */
static void s_refresh_max(const rf__cap_t *cap, rf__shape_t *sh, int32_t n, int32_t old)
{
    const rf__tree_t *t = cap->tree;
    int32_t nv = sh->fit[n], ov = old; /* the child's value now and before */
    for (int32_t l = cap->L - 1; l >= 0; l--) {
        int32_t d = rf__tree_node_dom(t, n, l);
        int32_t cur = sh->maxfit[d];
        if (nv > cur) {
            sh->maxfit[d] = nv;
            sh->nmax[d] = 1;
            ov = cur;
            continue;
        }
        if (nv == cur) {
            sh->nmax[d]++;
            return;
        }
        if (ov < cur)
            return; /* the child did not hold the maximum: nothing changes */
        if (--sh->nmax[d] > 0)
            return; /* another child still holds it */
        int32_t m = 0, k = 0;
        if (l == cap->L - 1) {
            for (int32_t i = t->node_start[d]; i < t->node_end[d]; i++) {
                int32_t f = sh->fit[t->node_order[i]];
                k = f > m ? 1 : k + (f == m);
                m = f > m ? f : m;
            }
        } else {
            for (int32_t ch = t->child_start[d]; ch < t->child_start[d] + t->n_children[d]; ch++) {
                int32_t f = sh->maxfit[ch];
                k = f > m ? 1 : k + (f == m);
                m = f > m ? f : m;
            }
        }
        sh->maxfit[d] = m;
        sh->nmax[d] = k;
        ov = cur;
        nv = m;
    }
}

bool rf__shape_node(const rf__cap_t *cap, rf__shape_t *sh, int32_t n)
{
    if (cap->L == 0 || rf__tree_node_dom(cap->tree, n, cap->L - 1) < 0)
        return false; /* outside the tree: fit stays 0 */
    int32_t old = sh->fit[n];
    int32_t nf = rf__cap_fit(cap, sh, n);
    if (nf == old)
        return false;
    sh->fit[n] = nf;
    for (int32_t l = 0; l < cap->L; l++) {
        int32_t d = rf__tree_node_dom(cap->tree, n, l);
        sh->cnt[d] += nf - old;
        s_bucket_move(cap, sh, d);
    }
    s_refresh_max(cap, sh, n, old);
    return true;
}
