#!/usr/bin/env python3
"""Instructions per point read, under callgrind: the emulator beside the bare server.

    python3 bench/callgrind/reads.py --bin-dir target/release [--reads 5000] [--out DIR]

Starts each server under `valgrind --tool=callgrind`, loads 1,000 1 KB items
into the emulator (the bench's shape: `id`, `pk` over 64 partitions, `seq`,
padding), reads 300 of them to warm every cache, zeroes the counters
(`callgrind_control -z`), sends `--reads` point reads one after another on
one keep-alive connection, signed afresh as the bench signs them, and dumps
(`callgrind_control -d`). The dump holds those reads only: its total `Ir`
divided by the reads is the server's instructions per read, on every thread
(hyper, tokio, the handler). The bare server gets the same requests. Prints
both and their ratio; keeps the dumps in `--out` for `callgrind_annotate`.

Standard library only; the client's own cost is not measured (only the
server runs under valgrind).
"""

import argparse
import base64
import email.utils
import hashlib
import hmac
import http.client
import json
import os
import random
import re
import subprocess
import sys
import time

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
DB, COLL = "bench", "items"


def sign(verb, resource_type, link, date):
    payload = f"{verb.lower()}\n{resource_type.lower()}\n{link}\n{date.lower()}\n\n"
    digest = hmac.new(base64.b64decode(KEY), payload.encode(), hashlib.sha256).digest()
    sig = base64.b64encode(digest).decode()
    return f"type%3Dmaster%26ver%3D1.0%26sig%3D{sig.replace('+', '%2B').replace('/', '%2F').replace('=', '%3D')}"


def request(conn, method, path, resource_type, link, body=None, headers=()):
    date = email.utils.formatdate(usegmt=True)
    all_headers = {
        "authorization": sign(method, resource_type, link, date),
        "x-ms-date": date,
        "x-ms-version": "2020-07-15",
        "accept": "application/json",
    }
    all_headers.update(headers)
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        all_headers["content-type"] = "application/json"
    conn.request(method, path, body=data, headers=all_headers)
    response = conn.getresponse()
    payload = response.read()
    return response.status, payload


def start(binary, args, out_file):
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out_file}",
        binary,
        *args,
    ]
    # valgrind's own lines and the server's log go to a file: a full pipe would stall it.
    log = open(out_file + ".log", "w")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    # Both servers print `listening on ADDR` once bound.
    deadline = time.time() + 120
    for line in process.stdout:
        match = re.search(r"listening on (?:https?://)?([0-9.]+):(\d+)", line)
        if match:
            return process, match.group(1), int(match.group(2))
        if time.time() > deadline:
            break
    process.kill()
    sys.exit(f"{binary} did not say where it listens")


def control(process, option):
    subprocess.run(["callgrind_control", option, str(process.pid)], check=True, capture_output=True)


def dumps_of(out_dir, name):
    return {
        f for f in os.listdir(out_dir)
        if f.startswith(f"callgrind.{name}") and not f.endswith(".log")
    }


def dump_total(path):
    """The `Ir` of one dump: its `summary:` line (every thread, one file)."""
    with open(path) as dump:
        for line in dump:
            if line.startswith("summary:"):
                return int(line.split()[1])
    sys.exit(f"{path} has no summary line")


def measure(name, binary, args, out_dir, reads, load):
    """Instructions per read of `binary`: the one dump taken after `reads` reads."""
    for old in dumps_of(out_dir, name):
        os.remove(os.path.join(out_dir, old))
    process, host, port = start(binary, args, os.path.join(out_dir, f"callgrind.{name}"))
    try:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        items = load(conn) if load else [("0", "p00")]
        rng = random.Random(7)
        picks = [rng.choice(items) for _ in range(reads + 300)]

        def read(item):
            item_id, pk = item
            link = f"dbs/{DB}/colls/{COLL}/docs/{item_id}"
            status, _ = request(
                conn, "GET", "/" + link, "docs", link,
                headers={"x-ms-documentdb-partitionkey": json.dumps([pk])},
            )
            if status != 200:
                sys.exit(f"{name}: a read answered {status}")

        for item in picks[:300]:
            read(item)
        # Start-up, load and warm-up are zeroed; the next dump holds the reads only.
        control(process, "-z")
        before = dumps_of(out_dir, name)
        for item in picks[300:]:
            read(item)
        control(process, "-d")
        deadline = time.time() + 60
        while not (dumps_of(out_dir, name) - before) and time.time() < deadline:
            time.sleep(0.1)
        (dump,) = dumps_of(out_dir, name) - before
        time.sleep(0.5)  # let callgrind finish writing it
        return dump_total(os.path.join(out_dir, dump)) / reads, dump
    finally:
        process.terminate()
        process.wait(timeout=120)


def load_items(conn):
    status, _ = request(conn, "POST", "/dbs", "dbs", "", body={"id": DB})
    if status not in (201, 409):
        sys.exit(f"creating the database answered {status}")
    status, _ = request(
        conn, "POST", f"/dbs/{DB}/colls", "colls", f"dbs/{DB}",
        body={"id": COLL, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}},
    )
    if status not in (201, 409):
        sys.exit(f"creating the container answered {status}")
    ids = []
    link = f"dbs/{DB}/colls/{COLL}"
    for seq in range(1000):
        pk = f"p{seq % 64:02}"
        item = {"id": f"item-{seq}", "pk": pk, "seq": seq, "grp": seq % 10, "padding": "x" * 900}
        status, _ = request(
            conn, "POST", f"/{link}/docs", "docs", link, body=item,
            headers={"x-ms-documentdb-partitionkey": json.dumps([pk])},
        )
        if status != 201:
            sys.exit(f"creating an item answered {status}")
        ids.append((item["id"], pk))
    return ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default="target/release")
    parser.add_argument("--reads", type=int, default=5000)
    parser.add_argument("--out", default="target/callgrind")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    emulator = os.path.join(args.bin_dir, "cosmos-emulator")
    bare = os.path.join(args.bin_dir, "bare-server")
    emulator_ir, emulator_dump = measure(
        "emulator", emulator, ["--host", "127.0.0.1", "--port", "0", "--clock", "manual"], args.out, args.reads, load_items
    )
    bare_ir, bare_dump = measure("bare", bare, ["--port", "0", "--body-bytes", "1229"], args.out, args.reads, None)
    print(f"instructions per point read ({args.reads} reads, concurrency 1, every server thread)")
    print(f"  emulator     {emulator_ir:>10,.0f}")
    print(f"  bare server  {bare_ir:>10,.0f}")
    print(f"  emulator / bare  {emulator_ir / bare_ir:.2f}")
    print(f"dumps: {args.out}/{emulator_dump}, {args.out}/{bare_dump} (callgrind_annotate FILE)")


if __name__ == "__main__":
    main()
