/* server/cmd_outdated.c - `otel-webhook outdated`: the running pods whose
 * status record is stale, grouped by the workload that owns them, and
 * optionally a rollout restart of those workloads.
 *
 * One pass, no watch: Instrumentations, collectors and Namespaces are
 * listed once (cli_cluster.h), then the pods; each injected pod's record is
 * compared with what today's resources would give (mutate_record_stale).
 * Owners are found through the pod's controller reference (a ReplicaSet's
 * own owner), each link proven by uid against the API server (owner_of),
 * each owner read once.
 *
 * The record is the pod author's data: a record that does not prove itself
 * (mutate_record_check) is warned about and skipped, and a workload is
 * restarted only when one of its pods shows the staleness itself (the
 * images of our containers, the values of our variables against what
 * today's injection gives: mutate_record_stale_seen); one whose pods show
 * nothing is listed with the records' claim, and not restarted.
 *
 * --restart does what `kubectl rollout restart` does: a strategic merge
 * patch setting the pod template's kubectl.kubernetes.io/restartedAt
 * annotation, so the controller rolls the pods at its own pace. It is a
 * dry run unless --yes; workloads are restarted one at a time: the next
 * only once the previous one's rollout is complete (as `kubectl rollout
 * status` decides it, polled once a second, for at most --timeout) and at
 * least --interval seconds after the previous restart, so a change of
 * Instrumentation never restarts a cluster at once. A rollout that does not
 * complete in time stops the restarts. Only Deployments, StatefulSets and DaemonSets can be
 * restarted this way; other owners are named with what to do instead. */
#include "server/cli.h"

#include "base/alloc.h"
#include "base/json.h"
#include "kube/kubeconfig.h"
#include "kube/reader.h"
#include "kube/store.h"
#include "mutate/defaults.h"
#include "mutate/record.h"
#include "server/cli_cluster.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: otel-webhook outdated --kubeconfig FILE [--context NAME] | --in-cluster\n"
    "                             [--namespace NS] [--config FILE]\n"
    "                             [--restart [--yes] [--interval SECONDS] [--timeout SECONDS]]\n"
    "\n"
    "Lists the running pods whose otel-webhook/status record names an older version of an\n"
    "Instrumentation or collector, or other images, than today's resources would give,\n"
    "grouped by the workload that owns them. A record is the pod author's claim: one that does\n"
    "not match its pod is warned about and skipped, and only workloads whose pods show the\n"
    "staleness themselves (their images and variables against today's injection) are restarted.\n"
    "\n"
    "  --kubeconfig FILE      the cluster (current-context, or --context NAME)\n"
    "  --in-cluster           from inside a pod: KUBERNETES_SERVICE_HOST/PORT and the\n"
    "                         service-account token\n"
    "  -n, --namespace NS     only this namespace's pods (default: every namespace)\n"
    "  --config FILE          the webhook's settings file (default images, languages, ...)\n"
    "  --restart              restart the Deployments, StatefulSets and DaemonSets listed, as\n"
    "                         `kubectl rollout restart` does; a dry run unless --yes\n"
    "  --yes                  really restart\n"
    "  --interval SECONDS     at least this long between two restarts (default 30)\n"
    "  --timeout SECONDS      how long a restarted workload may take to roll out before the\n"
    "                         restarts stop (default 600); the next restart waits for it\n"
    "\n"
    "Exit status: 0 done, 1 the cluster could not be read or a restart failed, 2 usage.\n";

typedef struct oopts {
    const char *kubeconfig, *context, *ns, *config;
    bool incluster, restart, yes;
    long interval, timeout;
} oopts;

static int parse_args(int argc, char **argv, oopts *o) {
    enum { O_KUBECONFIG = 256, O_CONTEXT, O_INCLUSTER, O_CONFIG, O_RESTART, O_YES, O_INTERVAL, O_TIMEOUT };
    static const struct option longopts[] = {
        {"kubeconfig", required_argument, 0, O_KUBECONFIG}, {"context", required_argument, 0, O_CONTEXT},
        {"in-cluster", no_argument, 0, O_INCLUSTER},        {"namespace", required_argument, 0, 'n'},
        {"config", required_argument, 0, O_CONFIG},         {"restart", no_argument, 0, O_RESTART},
        {"yes", no_argument, 0, O_YES},                     {"interval", required_argument, 0, O_INTERVAL},
        {"timeout", required_argument, 0, O_TIMEOUT},
        {"help", no_argument, 0, 'h'},                      {0, 0, 0, 0},
    };
    *o = (oopts){.interval = 30, .timeout = 600};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":n:h", longopts)) != -1) {
        switch (c) {
        case O_KUBECONFIG: o->kubeconfig = optarg; break;
        case O_CONTEXT: o->context = optarg; break;
        case O_INCLUSTER: o->incluster = true; break;
        case 'n': o->ns = optarg; break;
        case O_CONFIG: o->config = optarg; break;
        case O_RESTART: o->restart = true; break;
        case O_YES: o->yes = true; break;
        case O_INTERVAL:
        case O_TIMEOUT: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 0 || v > 86400)
                return cli_usage_error("outdated", usage, "--%s %s: expected seconds from 0 to 86400",
                                       c == O_INTERVAL ? "interval" : "timeout", optarg);
            if (c == O_INTERVAL) o->interval = v;
            else o->timeout = v;
            break;
        }
        case 'h': fputs(usage, stdout); return -1;
        default: return cli_bad_option("outdated", usage, c, argv, longopts);
        }
    }
    if (optind < argc) return cli_usage_error("outdated", usage, "unexpected argument \"%s\"", argv[optind]);
    if (!o->kubeconfig && !o->incluster) return cli_usage_error("outdated", usage, "--kubeconfig or --in-cluster is required");
    if (o->kubeconfig && o->incluster) return cli_usage_error("outdated", usage, "--kubeconfig and --in-cluster exclude each other");
    if (o->context && !o->kubeconfig) return cli_usage_error("outdated", usage, "--context needs --kubeconfig");
    if (o->yes && !o->restart) return cli_usage_error("outdated", usage, "--yes needs --restart");
    return 0;
}

/* One owning workload and its outdated pods. */
typedef struct group {
    char *kind, *ns, *name;
    char **pods, **why;
    size_t npods, nwhy;
    bool seen; /* a pod of it shows its staleness itself (mutate_record_stale_seen) */
} group;

typedef struct outdated {
    kube_api_conn *conn;
    group *g;
    size_t ng, cap;
    json_object *owners; /* "resource/ns/name" -> apps_object's answer, read once */
} outdated;

static json_object *controller_ref(json_object *obj) {
    json_object *refs = jarr(jget(obj, "metadata"), "ownerReferences"), *first = NULL;
    for (size_t i = 0; i < jlen(refs); i++) {
        json_object *r = json_object_array_get_idx(refs, i);
        if (!first) first = r;
        if (jbool(r, "controller")) return r;
    }
    return first;
}

/* A reference's kind, qualified by its API group when it names one of the
 * apps kinds outside apps/v1 (OpenKruise's StatefulSet, ...): restarting
 * apps/v1's object of that name would restart somebody else's workload. */
static const char *ref_kind(json_object *ref, char *buf, size_t n) {
    const char *kind = jstr(ref, "kind"), *api = jstr(ref, "apiVersion");
    if (!kind || (api && !strcmp(api, "apps/v1"))) return kind;
    if (strcmp(kind, "Deployment") && strcmp(kind, "StatefulSet") && strcmp(kind, "DaemonSet") &&
        strcmp(kind, "ReplicaSet"))
        return kind;
    char group[128];
    snprintf(group, sizeof group, "%s", api ? api : "");
    char *slash = strchr(group, '/');
    if (slash) *slash = 0;
    snprintf(buf, n, "%s.%s", kind, *group ? group : "core");
    return buf;
}

static const char *apps_resource(const char *kind) {
    if (!strcmp(kind, "ReplicaSet")) return "replicasets";
    if (!strcmp(kind, "Deployment")) return "deployments";
    if (!strcmp(kind, "StatefulSet")) return "statefulsets";
    if (!strcmp(kind, "DaemonSet")) return "daemonsets";
    return NULL;
}

/* What the API server holds for an apps/v1 object, read once per run:
 * {"uid": ..., "ref": its controller reference or null}, or NULL when it
 * could not be read (gone, forbidden, unreachable: then nothing is proven
 * or disproven, and a restart fails or is refused later, by name). */
static json_object *apps_object(outdated *od, const char *resource, const char *ns, const char *name) {
    char *key = xasprintf("%s/%s/%s", resource, ns, name);
    json_object *e;
    if (!json_object_object_get_ex(od->owners, key, &e)) {
        char *path = xasprintf("/apis/apps/v1/namespaces/%s/%s/%s", ns, resource, name), *body = NULL, err[256];
        size_t len;
        int st = kube_api_get(od->conn, path, NULL, CLI_CLUSTER_TIMEOUT_MS, &body, &len, err, sizeof err);
        json_object *w = st == 200 ? json_tokener_parse(body) : NULL;
        const char *uid = jstr(jget(w, "metadata"), "uid");
        e = NULL;
        if (uid) {
            json_object *r = controller_ref(w);
            e = jnew_obj();
            jset(e, "uid", json_object_new_string(uid));
            jset(e, "ref", r && jstr(r, "kind") && jstr(r, "name") ? jcopy(r) : NULL);
        }
        jset(od->owners, key, e);
        json_object_put(w);
        free(body);
        free(path);
    }
    free(key);
    return e;
}

/* ref's uid is the uid of the object it names (or that object could not
 * be read); otherwise says so (what names what, and which uid each has). */
static bool ref_holds(json_object *ref, json_object *obj, const char *who, const char *ns, char *why, size_t n) {
    const char *want = jstr(ref, "uid"), *have = jstr(obj, "uid");
    if (!obj || (want && have && !strcmp(want, have))) return true;
    snprintf(why, n, "%s names %s %s/%s with uid %s, but that object's uid is %s", who, jstr(ref, "kind"), ns,
             jstr(ref, "name"), want ? want : "(none)", have);
    return false;
}

/* The workload a pod belongs to: a ReplicaSet's Deployment when it has one.
 * buf holds a qualified kind (ref_kind).
 *
 * An owner reference is the pod author's data, like the record: a pod may
 * name any workload of its namespace, and --restart would then roll that
 * workload on the strength of this pod's staleness. So the chain is proven
 * by uid against what the API server holds (the pod's controller, and a
 * ReplicaSet's Deployment), and a Deployment named by the pod itself (the
 * Deployment controller owns pods only through ReplicaSets) proves
 * nothing; a pod whose chain does not hold is said so on stderr and counts
 * as a pod of its own (never restarted), a ReplicaSet whose Deployment
 * does not hold as the ReplicaSet. */
static void owner_of(outdated *od, json_object *pod, const char *ns, const char **kind, const char **name, char *buf,
                     size_t n) {
    const char *pname = jstr(jget(pod, "metadata"), "name");
    json_object *ref = controller_ref(pod);
    *kind = ref ? ref_kind(ref, buf, n) : NULL;
    *name = ref ? jstr(ref, "name") : NULL;
    char why[512] = "";
    if (!*kind || !*name) goto own;
    const char *res = apps_resource(*kind);
    if (!res) return; /* not of apps/v1: listed under its owner, never restarted */
    if (!strcmp(*kind, "Deployment")) {
        snprintf(why, sizeof why, "its controller reference names Deployment %s/%s, which owns pods only through "
                                  "ReplicaSets", ns, *name);
        goto own;
    }
    json_object *obj = apps_object(od, res, ns, *name);
    if (!ref_holds(ref, obj, "its controller reference", ns, why, sizeof why)) goto own;
    if (strcmp(*kind, "ReplicaSet")) return;
    json_object *up = jget(obj, "ref");
    if (!up) return;
    char ubuf[192];
    const char *ukind = ref_kind(up, ubuf, sizeof ubuf), *uname = jstr(up, "name");
    if (!strcmp(ukind, "Deployment")) {
        char *rs = xasprintf("ReplicaSet %s/%s's controller reference", ns, *name);
        bool ok = ref_holds(up, apps_object(od, "deployments", ns, uname), rs, ns, why, sizeof why);
        free(rs);
        if (!ok) {
            fprintf(stderr, "warning: Pod %s/%s: %s; listed under the ReplicaSet\n", ns, pname, why);
            return;
        }
    }
    snprintf(buf, n, "%s", ukind);
    *kind = buf;
    *name = uname;
    return;
own:
    if (*why) fprintf(stderr, "warning: Pod %s/%s: %s; listed as a pod of its own\n", ns, pname, why);
    *kind = "Pod";
    *name = pname;
}

/* Only running pods can be restarted into a new injection: finished ones
 * (a Job's) and those being deleted are not outdated, just gone soon. */
static bool running(json_object *pod) {
    const char *phase = jstr(jget(pod, "status"), "phase");
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))) return false;
    return !jget(jget(pod, "metadata"), "deletionTimestamp");
}

static group *group_of(outdated *od, const char *kind, const char *ns, const char *name) {
    for (size_t i = 0; i < od->ng; i++)
        if (!strcmp(od->g[i].kind, kind) && !strcmp(od->g[i].ns, ns) && !strcmp(od->g[i].name, name)) return &od->g[i];
    od->g = xgrow(od->g, &od->cap, od->ng + 1, sizeof *od->g);
    group *g = &od->g[od->ng++];
    *g = (group){.kind = xstrdup(kind), .ns = xstrdup(ns), .name = xstrdup(name)};
    return g;
}

static void push(char ***v, size_t *n, const char *s, bool unique) {
    for (size_t i = 0; unique && i < *n; i++)
        if (!strcmp((*v)[i], s)) return;
    *v = xrealloc(*v, sizeof **v * (*n + 1));
    (*v)[(*n)++] = xstrdup(s);
}

static int group_cmp(const void *a, const void *b) {
    const group *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    if (!c) c = strcmp(x->kind, y->kind);
    return c ? c : strcmp(x->name, y->name);
}

static const char *restart_resource(const char *kind) {
    if (!strcmp(kind, "Deployment")) return "deployments";
    if (!strcmp(kind, "StatefulSet")) return "statefulsets";
    if (!strcmp(kind, "DaemonSet")) return "daemonsets";
    return NULL;
}

static int restart(outdated *od, const group *g) {
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char *path = xasprintf("/apis/apps/v1/namespaces/%s/%s/%s?fieldManager=otel-webhook-outdated", g->ns,
                           restart_resource(g->kind), g->name);
    char *patch = xasprintf("{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{"
                            "\"kubectl.kubernetes.io/restartedAt\":\"%s\"}}}}}", when);
    char *body = NULL, err[256];
    size_t len;
    int st = kube_api_request(od->conn, "PATCH", path, NULL, "application/strategic-merge-patch+json", patch, strlen(patch),
                              CLI_CLUSTER_TIMEOUT_MS, &body, &len, err, sizeof err);
    int rc = 0;
    if (st == 200) printf("restarted %s %s/%s\n", g->kind, g->ns, g->name);
    else {
        json_object *s = st > 0 ? json_tokener_parse(body) : NULL;
        const char *msg = jstr(s, "message");
        if (st < 0) fprintf(stderr, "otel-webhook outdated: restart %s %s/%s: %s\n", g->kind, g->ns, g->name, err);
        else fprintf(stderr, "otel-webhook outdated: restart %s %s/%s: HTTP %d%s%s\n", g->kind, g->ns, g->name, st,
                     msg ? ": " : "", msg ? msg : "");
        json_object_put(s);
        rc = 1;
    }
    free(body);
    free(patch);
    free(path);
    return rc;
}

static int64_t num(json_object *o, const char *key, int64_t dflt) {
    int64_t v;
    return jint(o, key, &v) ? v : dflt;
}

/* The rollout is complete, by kubectl rollout status's rules: the
 * controller has seen the new template and every replica is updated and
 * available (ready, for a StatefulSet). */
static bool rolled_out(json_object *w, const char *kind) {
    json_object *meta = jget(w, "metadata"), *spec = jget(w, "spec"), *st = jget(w, "status");
    if (num(st, "observedGeneration", 0) < num(meta, "generation", 1)) return false;
    if (!strcmp(kind, "DaemonSet")) {
        int64_t want = num(st, "desiredNumberScheduled", 0);
        return num(st, "updatedNumberScheduled", 0) >= want && num(st, "numberAvailable", 0) >= want;
    }
    int64_t want = num(spec, "replicas", 1), updated = num(st, "updatedReplicas", 0);
    if (updated < want) return false;
    if (!strcmp(kind, "StatefulSet")) return num(st, "readyReplicas", 0) >= want;
    return num(st, "replicas", 0) <= updated && num(st, "availableReplicas", 0) >= updated;
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_s(double s) {
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Waits until g's rollout is complete; 0, or 1 after saying why not. */
static int wait_rollout(outdated *od, const group *g, long timeout_s) {
    char *path = xasprintf("/apis/apps/v1/namespaces/%s/%s/%s", g->ns, restart_resource(g->kind), g->name);
    double deadline = mono() + (double)timeout_s;
    int rc = 1;
    for (;;) {
        char *body = NULL, err[256];
        size_t len;
        int st = kube_api_get(od->conn, path, NULL, CLI_CLUSTER_TIMEOUT_MS, &body, &len, err, sizeof err);
        json_object *w = st == 200 ? json_tokener_parse(body) : NULL;
        bool done = w && rolled_out(w, g->kind);
        json_object_put(w);
        free(body);
        if (done) {
            printf("rolled out %s %s/%s\n", g->kind, g->ns, g->name);
            rc = 0;
            break;
        }
        if (mono() >= deadline) {
            fprintf(stderr, "otel-webhook outdated: the rollout of %s %s/%s did not complete within %ld s; "
                            "no further restarts\n", g->kind, g->ns, g->name, timeout_s);
            break;
        }
        pause_s(1.0);
    }
    free(path);
    return rc;
}

int cmd_outdated(int argc, char **argv) {
    oopts o;
    int prc = parse_args(argc, argv, &o);
    if (prc) return prc < 0 ? 0 : prc;
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    kube_prepare prep = MUTATE_PREPARE(&cfg);
    kube_store *store = kube_store_new();
    kube_api *api = NULL;
    kube_view view = {0, -1};
    outdated od = {.owners = jnew_obj()};
    json_object *pods = NULL;
    int rc = 1;
    char err[512];

    if (o.config && cli_load_settings(&cfg, o.config, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        goto out;
    }
    cfg.opt.native_sidecars = cfg.native_sidecars == MUTATE_ON;
    api = o.kubeconfig ? kube_api_new_kubeconfig(o.kubeconfig, o.context, err, sizeof err)
                       : kube_api_new_incluster(NULL, err, sizeof err);
    if (!api) {
        fprintf(stderr, "otel-webhook outdated: %s\n", err);
        goto out;
    }
    od.conn = kube_api_conn_new(api, NULL);
    if (cli_cluster_load(od.conn, store, &prep, err, sizeof err) != 0) {
        fprintf(stderr, "otel-webhook outdated: %s\n", err);
        goto out;
    }
    char *ppath = o.ns ? xasprintf("/api/v1/namespaces/%s/pods", o.ns) : xstrdup("/api/v1/pods");
    int lrc = cli_cluster_list(od.conn, ppath, &pods, err, sizeof err);
    free(ppath);
    if (lrc != 0) {
        fprintf(stderr, "otel-webhook outdated: %s\n", err);
        goto out;
    }
    view = kube_store_acquire(store);
    kube_reader src;
    kube_reader_snapshot(&src, view.snap);
    size_t checked = 0, npods = 0;
    for (size_t i = 0; i < jlen(pods); i++) {
        json_object *pod = json_object_array_get_idx(pods, i);
        const char *ns = jstr(jget(pod, "metadata"), "namespace"), *pname = jstr(jget(pod, "metadata"), "name");
        if (!ns || !pname || !running(pod)) continue;
        const char *bad;
        json_object *rec = mutate_record_read(pod, &bad);
        if (!rec) {
            if (bad) fprintf(stderr, "warning: Pod %s/%s: %s: %s\n", ns, pname, MUTATE_RECORD_KEY, bad);
            continue;
        }
        char cerr[256];
        bool proven = mutate_record_check(pod, rec, cerr, sizeof cerr);
        json_object_put(rec);
        if (!proven) { /* the pod author's word, not ours: neither listed nor restarted */
            fprintf(stderr, "warning: Pod %s/%s: %s: %s; not checked\n", ns, pname, MUTATE_RECORD_KEY, cerr);
            continue;
        }
        checked++;
        mutate_request req = {.pod = pod, .namespace = ns, .src = &src, .opt = &cfg.opt};
        req.ns = kube_snapshot_get(view.snap, "Namespace", NULL, ns);
        char **why, **seen;
        size_t nseen;
        int n = mutate_record_stale_seen(&req, &why, &seen, &nseen);
        mutate_strings_free(seen, nseen);
        if (n <= 0) continue;
        const char *kind, *name;
        char qualified[192];
        owner_of(&od, pod, ns, &kind, &name, qualified, sizeof qualified);
        group *g = group_of(&od, kind, ns, name ? name : "");
        g->seen |= nseen > 0;
        push(&g->pods, &g->npods, pname, false);
        for (int k = 0; k < n; k++) push(&g->why, &g->nwhy, why[k], true);
        mutate_strings_free(why, (size_t)n);
        npods++;
    }
    if (od.ng > 1) qsort(od.g, od.ng, sizeof *od.g, group_cmp);
    for (size_t i = 0; i < od.ng; i++) {
        group *g = &od.g[i];
        printf("%s %s/%s: %zu pod%s (", g->kind, g->ns, g->name, g->npods, g->npods == 1 ? "" : "s");
        for (size_t k = 0; k < g->npods; k++) printf("%s%s", k ? ", " : "", g->pods[k]);
        printf(")\n");
        for (size_t k = 0; k < g->nwhy; k++) printf("  %s\n", g->why[k]);
        if (!g->seen) printf("  (the records' word only: the pods' images and variables are what today's resources give)\n");
    }
    if (!od.ng) printf("no outdated pods (%zu injected pod%s checked)\n", checked, checked == 1 ? "" : "s");
    else printf("%zu workload%s, %zu pod%s outdated (%zu injected pod%s checked)\n", od.ng, od.ng == 1 ? "" : "s", npods,
                npods == 1 ? "" : "s", checked, checked == 1 ? "" : "s");
    rc = 0;
    if (o.restart) {
        bool first = true;
        double last = 0;
        for (size_t i = 0; i < od.ng; i++) {
            group *g = &od.g[i];
            if (!restart_resource(g->kind)) {
                printf("not restarted: %s %s/%s: %s\n", g->kind, g->ns, g->name,
                       !strcmp(g->kind, "Pod") ? "no owning workload; delete the pod to re-create it"
                       : !strcmp(g->kind, "ReplicaSet") ? "not owned by a Deployment; delete its pods"
                       : strchr(g->kind, '.') ? "not of apps/v1; restart it with its own tooling"
                       : "not a Deployment, StatefulSet or DaemonSet");
                continue;
            }
            if (!g->seen) {
                printf("not restarted: %s %s/%s: its pods do not show the staleness their records claim\n", g->kind,
                       g->ns, g->name);
                continue;
            }
            if (!o.yes) {
                printf("would restart %s %s/%s (dry run: --yes to restart)\n", g->kind, g->ns, g->name);
                continue;
            }
            /* The rate limit: at least --interval from one restart to the next. */
            double wait = first ? 0 : (double)o.interval - (mono() - last);
            fflush(stdout);
            if (wait > 0) pause_s(wait);
            first = false;
            last = mono();
            if (restart(&od, g) != 0) {
                rc = 1;
                continue;
            }
            fflush(stdout);
            /* One workload at a time: the next once this one has rolled out. */
            if (wait_rollout(&od, g, o.timeout) != 0) {
                rc = 1;
                break;
            }
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) rc = 1;
out:
    if (view.slot >= 0) kube_store_release(store, &view);
    for (size_t i = 0; i < od.ng; i++) {
        free(od.g[i].kind);
        free(od.g[i].ns);
        free(od.g[i].name);
        mutate_strings_free(od.g[i].pods, od.g[i].npods);
        mutate_strings_free(od.g[i].why, od.g[i].nwhy);
    }
    free(od.g);
    json_object_put(od.owners);
    json_object_put(pods);
    kube_api_conn_free(od.conn);
    kube_api_free(api);
    kube_store_free(store);
    mutate_settings_free(&cfg);
    return rc;
}
