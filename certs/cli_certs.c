/* certs/cli_certs.c - `otel-webhook certs generate`.
 *
 * Option parsing only; tls_generate() does the work. Bad options are usage
 * errors (exit 2, base/cli.h); a name that is not a DNS label or a
 * directory we cannot write is a failure (exit 1, one line), so scripts see
 * the reason rather than the usage text. */
#include "certs/gen.h"

#include "base/cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: otel-webhook certs generate --service NAME --namespace NS --out DIR [--days N] [--dev]\n"
    "\n"
    "Creates a CA and a serving certificate for the webhook's Service, for\n"
    "clusters without cert-manager. Writes into DIR (created if missing):\n"
    "  ca.crt, ca.key    the CA (ECDSA P-256, \"otel-webhook CA\")\n"
    "  tls.crt, tls.key  the serving pair for NAME, NAME.NS, NAME.NS.svc and\n"
    "                    NAME.NS.svc.cluster.local\n"
    "  caBundle          base64 of ca.crt, for clientConfig.caBundle of the\n"
    "                    MutatingWebhookConfiguration\n"
    "Existing files of these names are replaced. Keys are written with mode 0600.\n"
    "\n"
    "  --service NAME    the webhook's Service\n"
    "  --namespace NS    its namespace (also -n)\n"
    "  --out DIR         output directory (also -o)\n"
    "  --days N          validity in days (default 365, at most 36500)\n"
    "  --dev             also valid for localhost, 127.0.0.1 and ::1\n"
    "\n"
    "Exit status: 0 done, 1 failure, 2 usage.\n";

int tls_cmd_certs(int argc, char **argv) {
    if (argc < 2) return cli_usage_error("certs", usage, "expected a subcommand: generate");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "generate") != 0) return cli_usage_error("certs", usage, "unknown subcommand \"%s\"", argv[1]);

    static const struct option longopts[] = {
        {"service", required_argument, NULL, 's'}, {"namespace", required_argument, NULL, 'n'},
        {"out", required_argument, NULL, 'o'},     {"days", required_argument, NULL, 'd'},
        {"dev", no_argument, NULL, 'D'},           {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tls_gen_options o = {.days = TLS_GEN_DEFAULT_DAYS};
    /* argv[1] ("generate") plays argv[0]; optind 0 makes glibc start over,
     * since the tests run several commands in one process. */
    int gargc = argc - 1;
    char **gargv = argv + 1;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = cli_getopt(gargc, gargv, ":n:o:h", longopts)) != -1) {
        switch (c) {
        case 's': o.service = optarg; break;
        case 'n': o.ns = optarg; break;
        case 'o': o.out_dir = optarg; break;
        case 'D': o.dev = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        case 'd': {
            char *end;
            errno = 0;
            long d = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || d < 1 || d > TLS_GEN_MAX_DAYS)
                return cli_usage_error("certs", usage, "--days wants a whole number from 1 to 36500, not \"%s\"", optarg);
            o.days = (int)d;
            break;
        }
        default: return cli_bad_option("certs", usage, c, gargv, longopts);
        }
    }
    if (optind < gargc) return cli_usage_error("certs", usage, "unexpected argument \"%s\"", gargv[optind]);
    if (!o.service) return cli_usage_error("certs", usage, "--service is required");
    if (!o.ns) return cli_usage_error("certs", usage, "--namespace is required");
    if (!o.out_dir) return cli_usage_error("certs", usage, "--out is required");

    char err[512];
    if (tls_generate(&o, err, sizeof err) != 0) {
        fprintf(stderr, "otel-webhook certs: %s\n", err);
        return 1;
    }
    const char *sep = o.out_dir[0] && o.out_dir[strlen(o.out_dir) - 1] == '/' ? "" : "/";
    for (size_t i = 0; i < sizeof tls_gen_files / sizeof tls_gen_files[0]; i++)
        printf("wrote %s%s%s\n", o.out_dir, sep, tls_gen_files[i]);
    printf("\nPaste the one line of %s%scaBundle into webhooks[].clientConfig.caBundle of the\n"
           "MutatingWebhookConfiguration, and serve tls.crt/tls.key, for example from\n"
           "  kubectl -n %s create secret tls %s-tls --cert=%s%stls.crt --key=%s%stls.key\n",
           o.out_dir, sep, o.ns, o.service, o.out_dir, sep, o.out_dir, sep);
    return 0;
}
