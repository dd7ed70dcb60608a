#!/usr/bin/env python3
"""Seed files for the LifeSync fuzz targets from Protocol/vectors/*.json.

usage: seeds.py TARGET VECTORS_DIR CORPUS_DIR

frame, session, session-nohello: one control byte, then the vector's "hex" bytes (the control
byte varies so that the cut points and session setups vary; see the targets' headers).
session-nohello also gets each HELLO vector followed by each BATCH vector.
entry: the entry JSON of every change in the batch vectors, canonical and loosely written.
discovery: the datagrams of discovery.json as they are (no control byte).
http: a control byte, then hand-written requests (keep-alive, chunked, 100-continue, malformed).
"""
import glob
import json
import os
import sys


def main():
    target, vectors_dir, corpus = sys.argv[1:4]
    os.makedirs(corpus, exist_ok=True)
    vectors = []
    for path in sorted(glob.glob(os.path.join(vectors_dir, "*.json"))):
        with open(path) as f:
            document = json.load(f)
        # Most files hold {"vectors": [...]}; a session transcript holds sessions of frames, each
        # a seed of its own (named by its session and place).
        vectors += document.get("vectors", [])
        # seal.json: a sealed BATCH and its refused variants, frames to mutate like any other.
        if "valid" in document and "hex" in document["valid"]:
            vectors.append({"name": document["valid"]["name"], "hex": document["valid"]["hex"], "message": {"type": "batch"}})
            vectors += [{"name": v["name"], "hex": v["hex"]} for v in document.get("refused", [])]
        for session in document.get("sessions", []):
            for i, frame in enumerate(session.get("frames", [])):
                if "hex" in frame:
                    vectors.append({"name": f"{session['name']}-{i}", "hex": frame["hex"], "message": frame.get("message")})
    written = 0

    def put(name, data):
        nonlocal written
        with open(os.path.join(corpus, "vec-" + name), "wb") as f:
            f.write(data)
        written += 1

    if target == "entry":
        for v in vectors:
            for i, change in enumerate((v.get("message") or {}).get("changes", [])):
                entry = change.get("entry")
                if not isinstance(entry, dict) or "timestamp" not in entry:
                    continue
                put(f"{v['name']}-{i}", json.dumps(entry, sort_keys=True, separators=(",", ":"),
                                                  ensure_ascii=False).encode())
                put(f"{v['name']}-{i}-loose", json.dumps(entry, indent=1, ensure_ascii=True).encode())
        # Unusual but valid (or nearly valid) spellings the scanner leaves to the reference.
        base = ('"id":"phone_9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f","source":"iphone",'
                '"device_id":"phone_6f1c2a3b-4d5e-4f60-8a71-92b3c4d5e6f7"')
        extras = {
            "nulls": '"timestamp":"2026-11-22T08:30:00Z","recorded_at":null,"category":null,"data":null',
            "offset": '"timestamp":"2026-11-22t08:30:00.123456+0530","recorded_at":"2026-11-22 08:30,5-02:00","data":{}',
            "escaped-name": '"timestamp":"2026-11-22T08:30:00Z","recorded_at":"2026-11-22T08:30:00Z","d\\u0061ta":{}',
            "numbers": '"timestamp":"2026-11-22T08:30:00Z","recorded_at":"2026-11-22T08:30:00Z","data":{"metric":'
                       '{"name":" m ","value":-0.0,"scale_min":-1e-5,"scale_max":1.5E+20,"unit":"\\u00e9"},'
                       '"location":{"latitude":-90,"longitude":180.0,"altitude":-3.25e0,"accuracy":0}}',
            "text": '"timestamp":"0000-01-01T00:00:00Z","recorded_at":"9999-12-31T23:59:59.999Z","data":{"text":'
                    '"\\ud83d\\ude00 \\n\\u0001 caf\u00e9 e\u0301","tags":["a","\u00e9"]}',
        }
        for name, members in extras.items():
            put("hand-" + name, ("{" + base + "," + members + "}").encode())
    elif target == "http":
        body = b'{"timestamp":"2026-11-22T08:30:00Z","category":"note","data":{"text":"hi","tags":["a"]}}'
        requests = {
            "get": b"GET /api/entries?since=2026-11-22&limit=5&search=buy+gro%C3%A7eries HTTP/1.1\r\nHost: n\r\n"
                   b"Authorization: Bearer lsk_0123\r\n\r\n",
            "post": b"POST /api/entries?atomic=true HTTP/1.1\r\nHost: n\r\nContent-Type: application/json\r\n"
                    b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body,
            "chunked": b"PUT /api/entries/x HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\nIf-Match: \"e\"\r\n\r\n"
                       b"5;ext=1\r\nhello\r\n0\r\nTrailer: t\r\n\r\n",
            "continue": b"POST / HTTP/1.1\r\nHost: n\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok",
            "pipelined": b"HEAD /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET http://n/b?x HTTP/1.1\r\nHost: n\r\n"
                         b"Connection: close\r\n\r\n",
            "malformed": b"\r\nGET /%zz HTTP/1.1\r\nHost: n\r\n folded\r\n\r\n",
        }
        for n, (name, request) in enumerate(sorted(requests.items())):
            put(name, bytes([(n * 53 + 17) % 256]) + request)
    elif target == "discovery":
        for v in vectors:
            if v["name"].startswith("discovery_"):
                put(v["name"], bytes.fromhex(v["hex"]))
    else:
        for n, v in enumerate(vectors):
            if "hex" not in v:  # not a frame (recording_signature.json), or given in parts (limits.json)
                continue
            frame = bytes.fromhex(v["hex"])
            if target == "frame":
                control = (n * 53 + 17) % 256
            else:
                # frame by frame, alternating local role and recordings (bits 0-2), phone peer
                control = 0x08 | (n % 8)
            put(v["name"], bytes([control]) + frame)
        if target == "session-nohello":
            hellos = [v for v in vectors if "hex" in v and (v.get("message") or {}).get("type") == "hello"]
            batches = [v for v in vectors if "hex" in v and (v.get("message") or {}).get("type") == "batch"]
            for h in hellos:
                for b in batches:
                    put(f"{h['name']}+{b['name']}", bytes([0x08]) + bytes.fromhex(h["hex"] + b["hex"]))
    print(f"{written} vector seeds in {corpus}")


if __name__ == "__main__":
    main()
