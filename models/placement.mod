/* models/placement.mod: rackfit's integer program (docs/ilp.md) in GNU
 * MathProg, at NODE granularity: every unit is one node (c_u = 1), so the
 * host level needs no h variables: it is a level like the others, whose
 * domains happen to be single nodes.
 *
 *   python3 scripts/problem2dat.py PROBLEM.json > P.dat
 *   glpsol -m models/placement.mod -d P.dat
 *
 * The data (eligibility, domains, free capacity in base units) is computed
 * from the contract's JSON by scripts/problem2dat.py. The lexicographic
 * objective of the contract (value per priority, highest first, units then
 * pods; then the penalty) is ONE weighted sum here, with weights computed
 * from the data's own bounds so that
 *   - within a priority, one more GPU (unit) outweighs every pod,
 *   - with `ordered` admission, one more admitted gang outweighs the value,
 *   - a higher priority's stage outweighs everything below it,
 *   - any value outweighs the whole penalty.
 * That is exact, but the weights grow as the product over priorities: it is
 * meant for small problems (tests/integration/glpsol.sh), not for the
 * service, which solves the stages one after the other (docs/ilp.md).
 *
 * Running gangs (PLACEMENT-MODEL.md, "Running gangs and preemption";
 * docs/ilp.md rows 8 and 9): q[v] = 1 preempts running gang v whole. Node
 * capacity is per priority: the new pods of priority <= k fit in
 * max(0, allocatable - used + what preempted gangs below k use there), per
 * resource, the max made exact by an indicator dl of the new pods that
 * request that resource; a victim needs a new pod
 * of a higher gang on one of its nodes; kept running gangs count in the
 * value at their priority and in the penalty. With no running gangs in the
 * data (nV = 0) this is the plain capacity row.
 *
 * After the solve it prints, for the test to read:
 *   RF value PRIORITY UNITS PODS     one line per distinct priority
 *   RF penalty P                     the total penalty of admitted and kept running gangs
 *   RF gang NAME 0|1                 admitted or not, per gang
 *   RF running NAME 0|1              preempted or not, per running gang
 * recomputing the domains from the placements (not from the z variables). */

/* ---- data ---------------------------------------------------------------- */

param nN integer >= 0;          # nodes
param nL integer >= 1;          # levels, coarsest first
param nG integer >= 0;          # gangs
param nP integer >= 0;          # pod sets, over all gangs
param nR integer >= 1;          # resources that some pod requests (1 = pods)
param ordered binary;           # options.admission == "ordered"

set N := 1..nN;
set L := 1..nL;
set G := 1..nG;
set P := 1..nP;
set R := 1..nR;

param cost{L} >= 0;             # level_costs
param nD{L} integer >= 1;       # domains per level
set D{l in L} := 1..nD[l];
param dom{N, L} integer >= 1;   # the node's domain at each level (a node
                                # lacking a level label is a domain of its own)

param gname{G} symbolic;
param prio{G} integer;          # priority
param bw{G} >= 0;               # bandwidth
param greq{G} integer >= 0, <= nL;  # gang's required level, 0: none

param gang{P} integer >= 1, <= nG;  # the gang of each pod set
param cnt{P} integer >= 1;      # count
param mn{P} integer >= 0;       # min_count
param preq{P} integer >= 0, <= nL;  # pod set's own required level, 0: none
param sz{P} integer >= 0;       # slice size, 0: no slice
param slv{P} integer >= 0, <= nL;   # slice level
param val{P} >= 0;              # requests[value_resource] of one pod
param req{P, R} >= 0;           # requests of one pod (pods = 1)
param free{N, R} >= -1;         # free capacity, -1: unlimited
param elig{P, N} binary;        # the node may take new pods of the pod set
param bnd{P, N} integer >= 0, default 0;  # bound pods
param raw{n in N, r in R}, default free[n, r];  # allocatable - used, not clamped (with running gangs)

param nV integer >= 0, default 0;  # running gangs
set V := 1..nV;
param vname{V} symbolic;
param vprio{V} integer;
param vpre{V} binary;           # may be preempted (preemptible, preemption lower_priority)
param vunits{V} >= 0;           # its value while kept: units, pods
param vpods{V} >= 0;
param vpen{V} >= 0;             # its penalty while kept
param vuse{V, N, R} >= 0, default 0;  # what its pods use on a node (pods: one each)

/* ---- derived ------------------------------------------------------------- */

param B{p in P} := sum{n in N} bnd[p, n];        # bound pods of a pod set
set PR := {p in P: preq[p] > 0};                 # pod sets with a required level
set PS := {p in P: sz[p] > 0};                   # sliced pod sets
set PRI := setof{g in G} prio[g] union setof{v in V} vprio[v];  # distinct priorities

/* consecutive gangs of one priority, in problem order (ordered admission) */
set FIFO := {g in G, h in G: h > g and prio[h] = prio[g]
             and card({k in G: k > g and k < h and prio[k] = prio[g]}) = 0};

/* Weights. Within priority k the stage score is
 *   S_k = sum of (Wp[k] * val[p] + 1) * pods[p],  Wp[k] = 1 + all pods of k,
 * i.e. Wp[k] * units + pods with pods < Wp[k]: units first, pods break ties;
 * with ordered admission, (Smax[k] + 1) * (gangs admitted) is added first.
 * T[k] is one more than the largest stage score. A stage's weight M[k] is
 * the product of the T of every lower priority, times one more than the
 * largest penalty, so that a higher stage outweighs all below it. */
param Wp{k in PRI} := 1 + sum{p in P: prio[gang[p]] = k} cnt[p] + sum{v in V: vprio[v] = k} vpods[v];
param Smax{k in PRI} := sum{p in P: prio[gang[p]] = k} (Wp[k] * val[p] + 1) * cnt[p]
                      + sum{v in V: vprio[v] = k} (Wp[k] * vunits[v] + vpods[v]);
param T{k in PRI} := if ordered = 1
                     then (Smax[k] + 1) * (card({g in G: prio[g] = k}) + 1)
                     else Smax[k] + 1;
param Pmax := sum{g in G} bw[g] * sum{l in L} cost[l]
              * max(0, min(nD[l], sum{p in P: gang[p] = g} cnt[p]) - 1)
              + sum{v in V} vpen[v];
param M{k in PRI} := (floor(Pmax) + 1) * prod{j in PRI: j < k} T[j];

/* ---- variables ----------------------------------------------------------- */

var y{G} binary;                                          # gang admitted
var x{p in P, n in N} integer >= 0, <= cnt[p] * elig[p, n];  # new pods on a node
var z{g in G, l in L, d in D[l]} binary;                  # gang has pods in domain
var zp{p in PR, d in D[preq[p]]} binary;                  # pod set's required domain
var w{p in PS, d in D[slv[p]]} integer >= 0;              # slices in a domain
var q{V} binary;                                          # running gang preempted
var dl{N, R, PRI} binary;                                 # new pods of priority <= k requesting r on a node

/* ---- constraints (numbered as in docs/ilp.md) ---------------------------- */

/* 1. all or nothing, elastic. The pods of a pod set in the answer are
 * B[p] * y[g] + sum of x: bound pods count only for an admitted gang (a gang
 * whose bound pods cannot be completed is rejected, worth nothing) */
s.t. atLeast{p in P}: B[p] * y[gang[p]] + sum{n in N} x[p, n] >= mn[p] * y[gang[p]];
s.t. atMost{p in P}:  B[p] * y[gang[p]] + sum{n in N} x[p, n] <= cnt[p] * y[gang[p]];

/* 2 and 8. capacity per priority (bound pods and running gangs are in
 * `used`): the new pods of priority <= k against allocatable - used plus
 * what preempted gangs of priority below k free there; where used exceeds
 * allocatable in r the row binds only with new pods that request r
 * (dl[n, r, k]), as max(0, ...) says: a pod asking nothing of r does not
 * need r's room */
s.t. capacity{n in N, r in R, k in PRI: free[n, r] >= 0}:
    sum{p in P: prio[gang[p]] <= k} req[p, r] * x[p, n]
    <= raw[n, r] + sum{v in V: vprio[v] < k} vuse[v, n, r] * q[v]
       + (if raw[n, r] < 0 then -raw[n, r] else 0) * (1 - dl[n, r, k]);
s.t. newPods{p in P, n in N, r in R, k in PRI: prio[gang[p]] <= k and elig[p, n] = 1
             and free[n, r] >= 0 and raw[n, r] < 0 and req[p, r] > 0}:
    x[p, n] <= cnt[p] * dl[n, r, k];

/* 9. preemptors: only a preemptible gang, and only for a new pod of a gang
 * of higher priority on one of its nodes */
s.t. preemptible{v in V: vpre[v] = 0}: q[v] = 0;
s.t. preemptor{v in V}:
    q[v] <= sum{p in P, n in N: prio[gang[p]] > vprio[v] and vuse[v, n, 1] > 0} x[p, n];

/* 3. domains: pods in a domain mark it; only admitted gangs mark; an admitted
 * gang marks at least one domain per level (so that an admitted gang with no
 * pods pays max(D - 1, 0) = 0); bound pods mark their domains */
s.t. marks{p in P, n in N, l in L: elig[p, n] = 1}:
    x[p, n] <= cnt[p] * z[gang[p], l, dom[n, l]];
s.t. onlyAdmitted{g in G, l in L, d in D[l]}: z[g, l, d] <= y[g];
s.t. someDomain{g in G, l in L}: sum{d in D[l]} z[g, l, d] >= y[g];
s.t. boundMarks{p in P, n in N, l in L: bnd[p, n] > 0}:
    z[gang[p], l, dom[n, l]] = y[gang[p]];

/* 5. required topology: the gang in one domain of greq; the pod set in one
 * domain of preq (bound pods included) */
s.t. gangRequired{g in G: greq[g] > 0}: sum{d in D[greq[g]]} z[g, greq[g], d] <= 1;
s.t. podSetMarks{p in PR, n in N: elig[p, n] = 1}: x[p, n] <= cnt[p] * zp[p, dom[n, preq[p]]];
s.t. podSetBound{p in PR, n in N: bnd[p, n] > 0}: zp[p, dom[n, preq[p]]] >= y[gang[p]];
s.t. podSetRequired{p in PR}: sum{d in D[preq[p]]} zp[p, d] <= 1;

/* 6. slices: every slice-level domain holds a multiple of the slice size
 * (laid out domain by domain, each run of sz ranks then shares a domain) */
s.t. slices{p in PS, d in D[slv[p]]}:
    sum{n in N: dom[n, slv[p]] = d} (x[p, n] + bnd[p, n] * y[gang[p]]) = sz[p] * w[p, d];

/* 7. ordered admission: within a priority, admitted gangs are a prefix */
s.t. fifo{(g, h) in FIFO: ordered = 1}: y[g] >= y[h];

/* ---- objective ----------------------------------------------------------- */

maximize objective:
    sum{k in PRI} M[k] * (
        (if ordered = 1 then Smax[k] + 1 else 0) * sum{g in G: prio[g] = k} y[g]
      + sum{p in P: prio[gang[p]] = k} (Wp[k] * val[p] + 1) * (B[p] * y[gang[p]] + sum{n in N} x[p, n])
      + sum{v in V: vprio[v] = k} (Wp[k] * vunits[v] + vpods[v]) * (1 - q[v]))
    - sum{g in G} bw[g] * sum{l in L} cost[l] * (sum{d in D[l]} z[g, l, d] - y[g])
    - sum{v in V} vpen[v] * (1 - q[v]);

solve;

/* ---- report -------------------------------------------------------------- */

/* D(g, l) from the placements and bound pods of admitted gangs */
param used{g in G, l in L, d in D[l]} :=
    if y[g] > 0.5 and sum{p in P, n in N: gang[p] = g and dom[n, l] = d} (x[p, n] + bnd[p, n]) > 0.5
    then 1 else 0;

for {k in PRI}
    printf "RF value %d %d %d\n", k,
        round(sum{p in P: prio[gang[p]] = k} val[p] * (B[p] * y[gang[p]] + sum{n in N} x[p, n])
              + sum{v in V: vprio[v] = k} vunits[v] * (1 - q[v])),
        round(sum{p in P: prio[gang[p]] = k} (B[p] * y[gang[p]] + sum{n in N} x[p, n])
              + sum{v in V: vprio[v] = k} vpods[v] * (1 - q[v]));
printf "RF penalty %.9g\n",
    sum{g in G} bw[g] * sum{l in L} cost[l] * max(0, sum{d in D[l]} used[g, l, d] - 1)
    + sum{v in V} vpen[v] * (1 - round(q[v]));
for {g in G}
    printf "RF gang %s %d\n", gname[g], round(y[g]);
for {v in V}
    printf "RF running %s %d\n", vname[v], round(q[v]);

end;
