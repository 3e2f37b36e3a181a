/* server/serve_cr.c - the HTTP side of the custom resources' admission
 * routes (server/cr_admission.h): the answer, its metrics and its log
 * line, and the workers that compute the answers which may wait on the
 * API server. Apart from serve_http.c so that its routes stay a table
 * lookup.
 *
 * Which admissions leave the loop. A collector's validation, while a live
 * source is configured, may send SubjectAccessReviews (the
 * privilege-escalation and target-allocator checks), each a blocking
 * libcurl round trip bounded only by --access-review-budget. On an event
 * loop that would stall every pod admission queued behind it, so a slow
 * API server would slow pod creation cluster-wide. Those admissions, and
 * only those, go to a worker: the route and the live source decide it,
 * before the body is read: the hop costs the loop about 4K instructions
 * (the copy and the queue; callgrind, a collector's validation with three
 * reviews: 757K instructions on the loop inline, 103K handed off, HTTP
 * and TLS included), less than parsing the review to look at its
 * operation would, and a DELETE handed off for nothing is rare. Every
 * other route, and every route without a cluster, cannot wait on
 * anything and is answered inline as before; pods never come here.
 *
 * The workers: SERVE_CR_WORKERS threads shared by all loops, with one
 * queue of at most SERVE_CR_QUEUE admissions waiting. A thread per loop
 * would tie a loop's collector writes to its one API connection (one slow
 * review, and the next collector on that loop waits although the others'
 * threads are idle) and cost a thread and a connection per core for
 * requests that are rare; a shared pool lets any idle worker take any
 * loop's admission, for one mutex per admission. Two, because what they
 * spend is waiting, not CPU: the second keeps a collector write moving
 * while the first waits out a slow review. Each worker has its own json
 * tokener, and its own API connection through the live source's
 * per-thread state (kube/livesource.c, a pthread key, released when the
 * worker exits). A job carries a copy of the body: the request's memory
 * may go while it waits.
 *
 * Time. The review budget counts from the request's arrival on its loop,
 * so time spent queued is spent from it; the duration metric and the log
 * line's micros are the loop's arrival to the loop's answer.
 *
 * Past the queue (or once the loop is closing): the admission is answered
 * on the loop at once, through the same checks with no review sent, each
 * failing with the reason (cr_env.no_reviews): a collector that needs a
 * review is refused as when the API server does not answer ("unable to
 * check RBAC privilege escalation for user ...: too many ..."), one that
 * needs none is answered as always. Nothing waits without a bound.
 *
 * The request may go before its answer (an HTTP/2 stream reset, the
 * connection closed): h2o clears its memory pool, and a shared chunk in
 * that pool (h2o_mem_alloc_shared, the way h2o's proxy ties its client to
 * a request) forgets the request in the job when it is disposed. The
 * answer then still counts in the metrics and the log, and is dropped.
 *
 * Ownership. A job is the loop's from its arrival to its answer (its
 * request, the in-flight list) and the queue's or a worker's from
 * submission to the message back; two references under the pool's mutex
 * say who frees it. A worker posts its answer to the loop's receiver with
 * h2o_multithread_send_message, holding the mutex, so that a loop which
 * has closed (its shutdown done; it marks its jobs orphans, under the
 * mutex, before it goes) is never sent anything: the worker frees the job
 * instead, and never looks at the loop.
 *
 * Shutdown (serve_loop.c): a loop waits for its in-flight admissions like
 * for its connections, up to --shutdown-grace; then serve_cr_loop_close()
 * sends the answers already posted, answers what is left as above ("the
 * webhook is shutting down") and releases the loop's end. After every
 * loop, the live source is stopped (ending the reviews still in flight)
 * and serve_cr_stop() joins the workers, which free what they finish. */
#include "server/serve.h"

#include "base/alloc.h"
#include "server/log.h"
#include "server/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVE_CR_WORKERS 2
#define SERVE_CR_QUEUE 32 /* admissions waiting for a worker, all loops together */
#define STR_(x) #x
#define STR(x) STR_(x)

/* Why an admission is answered without its access reviews (compared as
 * pointers). */
static const char queue_full[] = "too many collector admissions are waiting for the API server";
static const char shutting_down[] = "the webhook is shutting down";
static const char no_workers[] = "no thread could be started for the access reviews";

typedef struct serve_cr_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    h2o_linklist_t queue; /* cr_job.queued, oldest first */
    size_t nqueued;
    bool stopping;
    int nworkers;
    pthread_t tids[SERVE_CR_WORKERS];
} serve_cr_pool;

struct serve_cr_loop {
    h2o_multithread_receiver_t done; /* the workers' answers */
    h2o_context_t *ctx;
    serve_server *srv;
    h2o_linklist_t inflight; /* cr_job.inflight: handed off, not answered (loop thread) */
    size_t ninflight;        /* loop thread */
    size_t posted;           /* under the pool's mutex: sent to done, not received */
    bool closed;             /* under the pool's mutex: no job is taken from it any more */
};

typedef struct cr_link cr_link;

typedef struct cr_job {
    h2o_linklist_t queued;          /* in the pool's queue (under its mutex) */
    h2o_multithread_message_t msg;  /* the answer, back to its loop */
    h2o_linklist_t inflight;        /* in its loop's list (loop thread) */
    struct serve_cr_loop *loop;
    h2o_req_t *req;                 /* loop thread; NULL once the request is gone */
    cr_link *link;                  /* in req's pool, while both are there */
    int refs;                       /* under the pool's mutex: the loop's, the pool's */
    bool orphan;                    /* under the pool's mutex: its loop has closed */
    cr_route route;
    char *body;
    size_t len;
    double t0, deadline;            /* CLOCK_MONOTONIC: arrival, end of the review budget */
    cr_out out;                     /* the worker's */
} cr_job;

/* Lives in the request's pool: disposed with it. */
struct cr_link {
    cr_job *job; /* NULL once answered */
};

static serve_ratelimit queue_full_log;

static void send_json(h2o_req_t *req, int status, const char *reason, const char *body, size_t len) {
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT("application/json"));
    h2o_send_inline(req, body, len);
}

/* The metrics and the log line of one answer, then the answer (req NULL:
 * the client has gone, and it is dropped); frees out's body. */
static void answer(h2o_req_t *req, int route, cr_out *out, double dt) {
    metrics_cr_admission(out->kind, out->op, out->result, out->rule, dt);
    char us[32], nw[16];
    snprintf(us, sizeof us, "%.0f", dt * 1e6);
    snprintf(nw, sizeof nw, "%zu", out->nwarnings);
    if (out->r.status == 400) {
        metrics_error(ERR_BAD_REQUEST);
        log_kv(LOG_WARN, "bad admission request", "path", cr_admission_path(route), "error", out->r.error, NULL);
        if (req) send_json(req, 400, "Bad Request", out->r.body, out->r.len);
    } else {
        /* One line per write of a resource: they are few, and who changed
         * what, and why it was refused, is what an operator looks for. */
        log_kv(out->result == CR_REJECTED ? LOG_WARN : LOG_INFO, metrics_cr_results[out->result], "uid", out->r.uid,
               "kind", metrics_cr_kinds[out->kind], "operation", metrics_cr_ops[out->op], "namespace", out->ns, "name",
               out->name, "user", out->user, "dry_run", out->dry_run ? "true" : "false", LOG_NUM("warnings"), nw,
               LOG_NUM("micros"), us,
               /* a NULL key ends the list: rule and message only when refused */
               out->rule ? "rule" : NULL, out->rule, out->message[0] ? "message" : NULL, out->message, NULL);
        if (req) send_json(req, 200, "OK", out->r.body, out->r.len);
    }
    if (!req) log_kv(LOG_INFO, "admission answer dropped: the client went away", "path", cr_admission_path(route), "uid",
                     out->r.uid, NULL);
    review_out_free(&out->r);
}

/* On the loop, now: env (with no_reviews to send none). */
static void answer_inline(h2o_req_t *req, const cr_env *env, int route, const char *body, size_t len, double t0) {
    cr_out out;
    cr_admission_handle(env, (cr_route)route, serve_loop_tokener(req->conn->ctx), body, len, &out);
    answer(req, route, &out, serve_now_mono() - t0);
}

static void job_free(cr_job *j) {
    review_out_free(&j->out.r);
    free(j->body);
    free(j);
}

/* Drops one reference (the pool's mutex held); true when it was the last. */
static bool job_unref(cr_job *j) { return --j->refs == 0; }

static void on_req_gone(void *p) {
    cr_link *k = p;
    if (k->job) k->job->req = NULL, k->job->link = NULL;
}

/* The request is about to be answered: nothing of the job may refer to it
 * afterwards, nor its pool to the job. */
static h2o_req_t *job_take_req(cr_job *j) {
    h2o_req_t *req = j->req;
    if (j->link) j->link->job = NULL;
    j->req = NULL;
    j->link = NULL;
    return req;
}

/* ---- the workers ----------------------------------------------------------- */

static void *worker_main(void *arg) {
    serve_server *srv = arg;
    serve_cr_pool *p = srv->cr_pool;
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stopping && h2o_linklist_is_empty(&p->queue)) pthread_cond_wait(&p->cv, &p->mu);
        if (h2o_linklist_is_empty(&p->queue)) break; /* stopping, and nothing left */
        cr_job *j = H2O_STRUCT_FROM_MEMBER(cr_job, queued, p->queue.next);
        h2o_linklist_unlink(&j->queued);
        p->nqueued--;
        pthread_mutex_unlock(&p->mu);

        cr_env env = srv->cr;
        double left = j->deadline - serve_now_mono();
        env.review_budget = left > 0 ? left : 0;
        cr_admission_handle(&env, j->route, tok, j->body, j->len, &j->out);

        pthread_mutex_lock(&p->mu);
        if (j->orphan) {
            /* Its loop has closed (and freed its end): it answered the
             * request already, or the client is gone. */
            if (job_unref(j)) job_free(j);
        } else {
            j->loop->posted++;
            h2o_multithread_send_message(&j->loop->done, &j->msg);
        }
    }
    pthread_mutex_unlock(&p->mu);
    json_tokener_free(tok);
    return NULL;
}

void serve_cr_start(serve_server *srv) {
    serve_cr_pool *p = xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    h2o_linklist_init_anchor(&p->queue);
    srv->cr_pool = p;
    /* Without a cluster no admission can wait on anything: no workers. */
    if (!srv->cr.live) return;
    for (int i = 0; i < SERVE_CR_WORKERS; i++) {
        if (pthread_create(&p->tids[i], NULL, worker_main, srv) != 0) {
            log_kv(LOG_WARN, "cannot start a worker for the collector admissions", NULL);
            break;
        }
        p->nworkers++;
    }
}

void serve_cr_stop(serve_server *srv) {
    serve_cr_pool *p = srv->cr_pool;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nworkers; i++) pthread_join(p->tids[i], NULL);
    /* Every loop closed before: it took its waiting jobs back. */
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    srv->cr_pool = NULL;
}

/* ---- each loop's end ----------------------------------------------------------- */

static void on_done(h2o_multithread_receiver_t *r, h2o_linklist_t *messages) {
    struct serve_cr_loop *l = H2O_STRUCT_FROM_MEMBER(struct serve_cr_loop, done, r);
    size_t n = 0;
    while (!h2o_linklist_is_empty(messages)) {
        cr_job *j = H2O_STRUCT_FROM_MEMBER(cr_job, msg.link, messages->next);
        h2o_linklist_unlink(&j->msg.link);
        h2o_linklist_unlink(&j->inflight);
        l->ninflight--;
        n++;
        answer(job_take_req(j), j->route, &j->out, serve_now_mono() - j->t0);
        job_free(j); /* both references: the worker gave its own with the message */
    }
    pthread_mutex_lock(&l->srv->cr_pool->mu);
    l->posted -= n;
    pthread_mutex_unlock(&l->srv->cr_pool->mu);
}

struct serve_cr_loop *serve_cr_loop_new(serve_server *srv, h2o_context_t *ctx) {
    struct serve_cr_loop *l = xcalloc(1, sizeof *l);
    l->ctx = ctx;
    l->srv = srv;
    h2o_linklist_init_anchor(&l->inflight);
    h2o_multithread_register_receiver(ctx->queue, &l->done, on_done);
    return l;
}

size_t serve_cr_loop_inflight(const struct serve_cr_loop *l) { return l->ninflight; }

size_t serve_cr_loop_close(struct serve_cr_loop *l) {
    serve_cr_pool *p = l->srv->cr_pool;
    size_t answered = 0;
    pthread_mutex_lock(&p->mu);
    l->closed = true;
    /* The jobs still waiting come back: no worker will see them. */
    for (h2o_linklist_t *e = p->queue.next, *next; e != &p->queue; e = next) {
        next = e->next;
        cr_job *j = H2O_STRUCT_FROM_MEMBER(cr_job, queued, e);
        if (j->loop != l) continue;
        h2o_linklist_unlink(&j->queued);
        p->nqueued--;
        job_unref(j);
    }
    /* The others are with a worker or on their way back: none is sent
     * here once this is said. */
    for (h2o_linklist_t *e = l->inflight.next; e != &l->inflight; e = e->next)
        H2O_STRUCT_FROM_MEMBER(cr_job, inflight, e)->orphan = true;
    size_t posted = l->posted;
    pthread_mutex_unlock(&p->mu);
    /* Answers already sent are complete: they go out as they are. Their
     * bytes are in the loop's pipe already (sent under the mutex). */
    while (posted > 0) {
        h2o_evloop_run(l->ctx->loop, 10);
        pthread_mutex_lock(&p->mu);
        posted = l->posted;
        pthread_mutex_unlock(&p->mu);
    }
    /* What is left is waiting or with a worker: answered now, without
     * the reviews. A worker that finishes one later frees it. */
    cr_env env = l->srv->cr;
    env.no_reviews = shutting_down;
    while (!h2o_linklist_is_empty(&l->inflight)) {
        cr_job *j = H2O_STRUCT_FROM_MEMBER(cr_job, inflight, l->inflight.next);
        h2o_linklist_unlink(&j->inflight);
        l->ninflight--;
        h2o_req_t *req = job_take_req(j);
        if (req) {
            answer_inline(req, &env, j->route, j->body, j->len, j->t0);
            answered++;
        }
        pthread_mutex_lock(&p->mu);
        bool last = job_unref(j);
        pthread_mutex_unlock(&p->mu);
        if (last) job_free(j);
    }
    h2o_multithread_unregister_receiver(l->ctx->queue, &l->done);
    free(l);
    return answered;
}

/* Into the queue: NULL, or why not (then the caller answers). */
static const char *submit(serve_cr_pool *p, cr_job *j) {
    pthread_mutex_lock(&p->mu);
    const char *why = p->nworkers == 0                   ? no_workers
                      : p->stopping || j->loop->closed   ? shutting_down
                      : p->nqueued >= SERVE_CR_QUEUE     ? queue_full
                                                         : NULL;
    if (!why) {
        j->refs = 2;
        h2o_linklist_insert(&p->queue, &j->queued);
        p->nqueued++;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return why;
}

void serve_cr_admission(serve_server *srv, h2o_req_t *req, int route) {
    if (log_enabled(LOG_DEBUG)) {
        char *b = xstrndup(req->entity.base ? req->entity.base : "", req->entity.len);
        log_kv(LOG_DEBUG, "admission request", "path", cr_admission_path(route), "body", b, NULL);
        free(b);
    }
    double t0 = serve_now_mono();
    if (route != CR_VALIDATE_COLLECTOR || !srv->cr.live) {
        answer_inline(req, &srv->cr, route, req->entity.base, req->entity.len, t0);
        return;
    }
    struct serve_cr_loop *l = serve_loop_cr(req->conn->ctx);
    if (!l) {
        /* A request that arrives after the loop closed its end. */
        cr_env env = srv->cr;
        env.no_reviews = shutting_down;
        answer_inline(req, &env, route, req->entity.base, req->entity.len, t0);
        return;
    }
    cr_job *j = xcalloc(1, sizeof *j);
    j->loop = l;
    j->route = (cr_route)route;
    j->len = req->entity.len;
    j->body = xmalloc(j->len + 1);
    if (j->len) memcpy(j->body, req->entity.base, j->len);
    j->body[j->len] = 0;
    j->t0 = t0;
    j->deadline = t0 + srv->cr.review_budget;
    const char *why = submit(srv->cr_pool, j);
    if (why) {
        job_free(j);
        unsigned long quiet;
        if (why != shutting_down && serve_ratelimit_ok(&queue_full_log, 10, &quiet)) {
            char msg[160], q[32];
            snprintf(msg, sizeof msg, "collector admission answered without access reviews: %s", why);
            snprintf(q, sizeof q, "%lu", quiet);
            log_kv(LOG_WARN, msg, LOG_NUM("queue"), STR(SERVE_CR_QUEUE), LOG_NUM("unlogged_since"), q, NULL);
        }
        cr_env env = srv->cr;
        env.no_reviews = why;
        answer_inline(req, &env, route, req->entity.base, req->entity.len, t0);
        return;
    }
    /* Submitted: a worker may be running it already, but the request and
     * the in-flight list are this thread's alone. */
    j->req = req;
    j->link = h2o_mem_alloc_shared(&req->pool, sizeof *j->link, on_req_gone);
    j->link->job = j;
    h2o_linklist_insert(&l->inflight, &j->inflight);
    l->ninflight++;
}
