#!/usr/bin/env python3
"""Renders the shipped proxy configs of deploy/ for tests/deploy/run.sh.

The test must run the files an operator copies, not a second hand-written
copy, so only what differs on a test machine is replaced: ports, the
certificate's and the log's paths, loopback instead of every interface.
Each replacement must match the shipped text exactly as often as expected;
when deploy/ changes, this fails loudly instead of testing something else.

    render.py nginx-check SHIPPED OUT --tls-dir D --access-log F
        the file as shipped (ports 80 and 443, IPv6 too), for `nginx -t`
    render.py nginx SHIPPED OUT --tls-dir D --access-log F \\
            --server-port N --https-port N --http-port N
        the file to run, on 127.0.0.1
    render.py caddy SHIPPED OUT --tls-dir D --server-port N --https-port N
        the file to run, on 127.0.0.1, with the test's certificate
    render.py nginx-cluster SHIPPED OUT --server-port N --http-port N
        the cluster's balancer, its three nodes all this one server
"""

import argparse
import sys


def replace(text, old, new, count, what):
    found = text.count(old)
    if found != count:
        sys.exit(
            f"render.py: expected {count} x {old!r} in {what}, found {found}: "
            "deploy/ changed, update tests/deploy/render.py"
        )
    return text.replace(old, new)


def nginx_files(text, args, what):
    text = replace(
        text,
        "/etc/letsencrypt/live/chess.example.org/",
        args.tls_dir.rstrip("/") + "/",
        2,
        what,
    )
    return replace(text, "/var/log/nginx/rookery.access.log", args.access_log, 1, what)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["nginx-check", "nginx", "caddy", "nginx-cluster"])
    parser.add_argument("shipped")
    parser.add_argument("out")
    parser.add_argument("--tls-dir")
    parser.add_argument("--access-log")
    parser.add_argument("--server-port", type=int)
    parser.add_argument("--https-port", type=int)
    parser.add_argument("--http-port", type=int)
    args = parser.parse_args()
    with open(args.shipped) as f:
        text = f.read()
    what = args.shipped

    if args.kind == "nginx-check":
        text = nginx_files(text, args, what)
    elif args.kind == "nginx":
        text = nginx_files(text, args, what)
        text = replace(
            text,
            "server 127.0.0.1:8080;",
            f"server 127.0.0.1:{args.server_port};",
            1,
            what,
        )
        text = replace(
            text, "    listen 80;\n", f"    listen 127.0.0.1:{args.http_port};\n", 1, what
        )
        text = replace(text, "    listen [::]:80;\n", "", 1, what)
        text = replace(
            text,
            "    listen 443 ssl http2;\n",
            f"    listen 127.0.0.1:{args.https_port} ssl http2;\n",
            1,
            what,
        )
        text = replace(text, "    listen [::]:443 ssl http2;\n", "", 1, what)
    elif args.kind == "nginx-cluster":
        for node in ["node-1", "node-2", "node-3"]:
            text = replace(
                text, f"server {node}:8080 ", f"server 127.0.0.1:{args.server_port} ", 1, what
            )
        text = replace(
            text, "    listen 80;\n", f"    listen 127.0.0.1:{args.http_port};\n", 1, what
        )
    else:
        tls = args.tls_dir.rstrip("/")
        # No admin endpoint (it would take port 2019), no redirect listener
        # on port 80; clients that send no SNI (an IP address) get the
        # test's certificate.
        text = (
            "{\n\tadmin off\n\tauto_https disable_redirects\n"
            "\tdefault_sni 127.0.0.1\n}\n\n" + text
        )
        text = replace(
            text,
            "\nchess.example.org {\n",
            f"\nhttps://127.0.0.1:{args.https_port} {{\n"
            f"\tbind 127.0.0.1\n\ttls {tls}/fullchain.pem {tls}/privkey.pem\n",
            1,
            what,
        )
        text = replace(
            text,
            "reverse_proxy 127.0.0.1:8080 {",
            f"reverse_proxy 127.0.0.1:{args.server_port} {{",
            1,
            what,
        )

    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
