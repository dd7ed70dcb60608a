#!/usr/bin/env python3
"""Clean-room check of LifeSync change seals (PROTOCOL.md §5.2.5) against Protocol/vectors.

Written from Protocol/PROTOCOL.md and Protocol/vectors/ alone: Python 3 standard library plus
the `openssl` command line for ECDSA P-256. Usage: seal_check.py [--self-test] [--vectors DIR]
"""
import argparse, hashlib, json, os, re, subprocess, sys, tempfile

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
UUID_RE, NODE_RE = re.compile(UUID + r"\Z"), re.compile(r"(watch|phone|mac)_" + UUID + r"\Z")
EXTRA_RE = re.compile(r"(?!(text|metric|location|tags)\Z)[A-Za-z][A-Za-z0-9_]{0,63}\Z")  # §5.2.3
SEQ_MAX, MARK = 2**53 - 1, bytes.fromhex("151fe51c")
P256_SPKI_PREFIX = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")
RECEIVER = "mac_00000000-0000-4000-8000-000000000000"  # a third node: the vectors do not name the receiver


class Refused(Exception):
    """A receiver's refusal: `code` is the §6 error name, `why` says which rule."""
    def __init__(self, code, why):
        super().__init__(f"{code}: {why}")
        self.code, self.why = code, why


def require(condition, why, code="malformed"):
    if not condition:
        raise Refused(code, why)


class Reader:
    """§2 encodings: big-endian unsigned integers, str16; a payload ending inside a field is malformed (§3)."""
    def __init__(self, data, base):
        self.data, self.pos, self.base = data, 0, base  # base: offset of data in the frame

    def left(self):
        return len(self.data) - self.pos

    def raw(self, n):
        require(n <= self.left(), "payload ends inside a field")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def uint(self, n):
        return int.from_bytes(self.raw(n), "big")

    def str16(self):
        text = self.raw(self.uint(2))
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("malformed", "invalid UTF-8 in str16")

    def count(self, width, item, maximum, what):
        """§3.1: a count times its smallest item must fit in the bytes left, then stay within its maximum."""
        n = self.uint(width)
        require(n * item <= self.left() and n <= maximum, what)
        return n


def u(n, width):
    return n.to_bytes(width, "big")


def str16(text):
    """§2 str16: u16 byte length, then UTF-8."""
    return u(len(text.encode("utf-8")), 2) + text.encode("utf-8")


def decode_batch(frame):
    """§3 framing (exactly one BATCH frame), §5.2 layout, §5.2.1 change records, §5.2.5 seal section.
    Decodes what seals need; entry validation (§5.2.3) and through/vv rules are out of scope."""
    length = int.from_bytes(frame[:4], "big")
    require(0 < length <= 8388608 and len(frame) == 4 + length and frame[4] == 0x02, "not one BATCH frame")
    r = Reader(frame[5:], base=5)
    batch, table = {"batch_id": r.uint(8), "changes": [], "through": {}, "seals": []}, []
    for _ in range(r.count(2, 5, 4096, "origin_count")):
        table.append(r.str16())
        r.str16(), r.uint(1)  # the owner's node_id and role: the sender's word, deciding nothing (§5.2.5)
        require(UUID_RE.match(table[-1]) and table[-1] not in table[:-1], "origin table entry")

    def origin_at(index):  # a u16 index into the origin table (§2.4, compact form)
        require(index < len(table), "origin index outside the table")
        return table[index]

    for _ in range(r.count(4, 30, 10000, "change_count")):
        c = {"kind": r.uint(1), "flags": r.uint(1)}
        require(c["kind"] in (1, 2) and not c["flags"] & 0xF8, "change kind or flag bits")
        require(not (c["flags"] & 2 and (c["flags"] & 1 or c["kind"] == 2)), "field mask on a delete or recording")
        require(not (c["flags"] & 4 and not c["flags"] & 2), "extra member names without the fields byte")
        c["fields"] = r.uint(1) if c["flags"] & 2 else 0xFF  # bit 1 with 0xFF and no bit 2 reads as no bit 1
        c["extra"] = None  # every extra member (§5.2.1)
        if c["flags"] & 4:
            c["extra"] = [r.raw(r.uint(2)).decode("ascii", "replace") for _ in range(r.count(1, 3, 128, "extra_count"))]
            require(all(EXTRA_RE.match(n) for n in c["extra"]) and c["extra"] == sorted(set(c["extra"])), "extra member names")
        elif c["flags"] & 2 and c["fields"] != 0xFF:
            c["extra"] = []
        c["id"], c["origin"], c["seq"], c["hlc"] = r.str16(), origin_at(r.uint(2)), r.uint(8), r.uint(8)
        c["vv"] = dict((origin_at(r.uint(2)), r.uint(8)) for _ in range(r.count(2, 10, 4096, "vv_count")))
        length = r.uint(4)
        require(length <= 262144 and not (c["flags"] & 1 and length), "entry length")
        c["content_at"], c["content"] = r.base + r.pos, r.raw(length)
        batch["changes"].append(c)
    for _ in range(r.count(2, 10, 4096, "through_count")):
        origin = origin_at(r.uint(2))
        batch["through"][origin] = r.uint(8)
    if r.left():  # the seal section: present exactly when bytes follow `through` (§5.2.5)
        seal_count, members_total = r.count(2, 205, 4096, "seal_count"), 0
        require(seal_count >= 1, "seal_count 0")
        for _ in range(seal_count):
            seal = {"origin": origin_at(r.uint(2)), "node_id": r.str16()}
            require(NODE_RE.match(seal["node_id"]), "seal node_id is not {role}_{uuid-v4}")
            require(r.uint(2) == 91, "seal key length is not 91")
            seal["key_at"], seal["key"] = r.base + r.pos, r.raw(91)
            n = r.count(4, 40, 65536 - members_total, "seal member_count")
            members_total += n
            seal["members"] = [(r.uint(8), r.raw(32)) for _ in range(n)]
            seqs = [0] + [s for s, _ in seal["members"]]
            require(n >= 1 and all(a < b <= SEQ_MAX for a, b in zip(seqs, seqs[1:])), "seal members")
            seal["signature_at"], seal["signature"] = r.base + r.pos, r.raw(64)
            batch["seals"].append(seal)
        require(not r.left(), "bytes left after the last seal")
    return batch


def canonical_number(x):
    """§5.2.2 numbers: integral |n| < 2^53 as an integer, else the shortest round-trip decimal: plain
    for 1e-4 <= |n| <= 2^53, otherwise exponent form with a sign and >= 2 digits (Swift's description)."""
    if isinstance(x, int) and abs(x) < 2**53:
        return str(x)
    x = float(x)
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))  # also turns -0.0 into 0
    text = repr(x)  # shortest round trip; Python uses exponent form below 1e-4 and from 1e16, like Swift
    if 2**53 < abs(x) < 1e16:  # Python writes these plain, Swift in exponent form
        whole = text.lstrip("-").split(".")[0]
        digits = whole.rstrip("0")
        text = ("-" if x < 0 else "") + digits[0] + ("." + digits[1:] if digits[1:] else "") + f"e+{len(whole) - 1:02d}"
    return text


def canonical_json(value):
    """§5.2.2 (entries) and §5.9.6 (recording metadata) canonical text: no whitespace, members sorted by
    the UTF-8 bytes of their names, strings raw UTF-8 escaping only " \\ \\n \\r \\t and \\u00xx (< 0x20)."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-8"))
        return "{" + ",".join(canonical_json(k) + ":" + canonical_json(v) for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, str):
        escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
        return '"' + "".join(escapes.get(ch) or (f"\\u{ord(ch):04x}" if ord(ch) < 0x20 else ch) for ch in value) + '"'
    require(not isinstance(value, bool) and value is not None, "true/false/null in content", "invalid_change")
    return canonical_number(value)


def canonical_content(change):
    """The content hashed by the write digest (§5.2.5): canonical JSON, empty for a delete."""
    if change["flags"] & 1:
        return b""
    try:
        return canonical_json(json.loads(change["content"].decode("utf-8"))).encode("utf-8")
    except ValueError as e:  # not JSON: §5.2.3 refuses the batch (we judge this before the seals)
        raise Refused("invalid_change", f"content of ({change['origin']}, {change['seq']}) is not JSON: {e}")


def write_digest(change):
    """§5.2.5 write digest: SHA-256 of domain, kind, flags, [fields], [extra names] as the change record
    writes them canonically (§5.2.1; never on a delete), id, origin name, seq, hlc, vv (origins ascending by bytes), content as bytes32."""
    deleted = change["flags"] & 1
    partial = not deleted and change["extra"] is not None
    named = partial and (change["extra"] or change["fields"] == 0xFF)  # bit 2, canonically (§5.2.1)
    data = b"lifesync-write-v2\x00" + u(change["kind"], 1) + u(deleted | (2 if partial else 0) | (4 if named else 0), 1)
    data += u(change["fields"], 1) if partial else b""
    data += (u(len(change["extra"]), 1) + b"".join(str16(n) for n in change["extra"])) if named else b""
    data += str16(change["id"]) + str16(change["origin"])
    data += u(change["seq"], 8) + u(change["hlc"], 8) + u(len(change["vv"]), 2)
    data += b"".join(str16(o) + u(s, 8) for o, s in sorted(change["vv"].items(), key=lambda kv: kv[0].encode()))
    content = canonical_content(change)
    return hashlib.sha256(data + u(len(content), 4) + content).digest()


def seal_message(seal):
    """§5.2.5 signed message: `lifesync-seal-v2` 00, node_id, origin (str16), member_count (u32), members."""
    return (b"lifesync-seal-v2\x00" + str16(seal["node_id"]) + str16(seal["origin"]) + u(len(seal["members"]), 4)
            + b"".join(u(s, 8) + d for s, d in seal["members"]))


def bound_incarnation(node_id, nonce):
    """§2.3.1: the mark, 3 nonce bytes, then the first 9 bytes of SHA-256("lifesync-incarnation" 00
    node_id nonce) with byte 8 (of the 16) given the variant bits 10; as lowercase UUID text."""
    tail = bytearray(hashlib.sha256(b"lifesync-incarnation\x00" + node_id.encode("utf-8") + nonce).digest()[:9])
    tail[1] = (tail[1] & 0x3F) | 0x80  # byte 8 of the incarnation is byte 1 of the hash
    h = (MARK + nonce + bytes(tail)).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def has_mark(origin):
    return bytes.fromhex(origin.replace("-", ""))[:4] == MARK


def is_bound_to(origin, node_id):
    """§2.3.1: the origin carries the mark and recomputing bytes 7-15 from node_id and its bytes 4-6 agrees."""
    return has_mark(origin) and bound_incarnation(node_id, bytes.fromhex(origin.replace("-", ""))[4:7]) == origin


def ecdsa_p256_verify(spki, signature, message):
    """§5.9.7 scheme, used by §5.2.5 rule 3: ECDSA P-256 with SHA-256, signature r || s (IEEE P1363),
    converted to a DER ECDSA-Sig-Value and checked by `openssl dgst -verify` with the DER SPKI."""
    if len(spki) != 91 or not spki.startswith(P256_SPKI_PREFIX):
        return False  # not an uncompressed P-256 SubjectPublicKeyInfo (§1.1)

    def der_integer(b):
        b = b.lstrip(b"\x00") or b"\x00"
        b = b"\x00" + b if b[0] & 0x80 else b
        return b"\x02" + bytes([len(b)]) + b
    body = der_integer(signature[:32]) + der_integer(signature[32:])
    with tempfile.TemporaryDirectory() as tmp:
        files = {"key.der": spki, "sig.der": b"\x30" + bytes([len(body)]) + body, "msg.bin": message}
        for name, data in files.items():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        run = subprocess.run(["openssl", "dgst", "-sha256", "-keyform", "DER", "-verify", "key.der",
                              "-signature", "sig.der", "msg.bin"], cwd=tmp, capture_output=True, text=True)
    return run.returncode == 0 and "Verified OK" in run.stdout


class Receiver:
    """§5.2.5 receiver rules 1-4 at one replica, with its state across batches (owners, bound keys).
    `verify=False` skips rule 3, for vectors whose keys and signatures are declared stand-ins."""
    def __init__(self, node_id, own_origins=(), pins=None, verify=True):
        self.node_id, self.own_origins, self.pins, self.verify = node_id, set(own_origins), pins or {}, verify
        self.owners, self.keys = {}, {}  # unbound origin -> owner node (rule 1); node -> first-seen key (rule 2)

    def receive(self, frame):
        """Decode, judge every seal and change; commit owners and keys only when the whole batch is taken."""
        batch = decode_batch(frame)
        owners, keys = dict(self.owners), dict(self.keys)
        digests = [write_digest(c) for c in batch["changes"]]
        for i, seal in enumerate(batch["seals"]):
            origin, node = seal["origin"], seal["node_id"]

            def rule(condition, why):
                require(condition, f"seal {i}: rule {why}", "forged_change")
            rule(origin not in self.own_origins or node == self.node_id, f"1, our own origin sealed as {node}")
            rule(not has_mark(origin) or is_bound_to(origin, node), f"1, {origin} is not bound to {node}")
            rule(has_mark(origin) or owners.get(origin, node) == node, f"1, {origin} is owned by {owners.get(origin)}")
            rule(node != self.node_id, "2, a peer's key for the receiver itself")
            if node in self.pins:
                rule(hashlib.sha256(seal["key"]).hexdigest() == self.pins[node], f"2, key is not the pin of {node}")
            else:
                rule(keys.setdefault(node, seal["key"]) == seal["key"], f"2, key is not the one bound to {node}")
            rule(not self.verify or ecdsa_p256_verify(seal["key"], seal["signature"], seal_message(seal)),
                 "3, signature does not verify")
            if not has_mark(origin) and any(c["origin"] == origin and (c["seq"], d) in seal["members"]
                                            for c, d in zip(batch["changes"], digests)):
                owners.setdefault(origin, node)  # the first verified seal vouching for a write owns it
        for c, d in zip(batch["changes"], digests):  # rule 4
            require(any(s["origin"] == c["origin"] and (c["seq"], d) in s["members"] for s in batch["seals"]),
                    f"rule 4, no seal vouches for ({c['origin']}, {c['seq']})", "forged_change")
        self.owners, self.keys = owners, keys
        return batch, digests


def verdict(receiver, hex_frame):
    """('accepted', None, batch, digests) or ('refused', code, why, None)."""
    try:
        return ("accepted", None) + receiver.receive(bytes.fromhex(hex_frame))
    except Refused as e:
        return "refused", e.code, e.why, None


class Checker:
    """Compares verdicts and published intermediate values with the vectors, one line per vector."""
    def __init__(self, vectors_dir):
        self.dir, self.failures = vectors_dir, 0

    def load(self, name):
        with open(os.path.join(self.dir, name), encoding="utf-8") as f:
            return json.load(f)

    def report(self, name, checks, detail):
        """`checks`: (label, got, want) triples; any difference makes the vector a MISMATCH."""
        bad = [f"{label}: got {got!r}, vector says {want!r}" for label, got, want in checks if got != want]
        self.failures += bool(bad)
        print(f"MISMATCH {name}: " + "; ".join(bad) if bad else f"ok {name}: {detail}")

    def seal_json(self):
        """seal.json: §2.3.1 bound incarnations, then `valid` and each `refused` frame through §5.2.5."""
        data = self.load("seal.json")
        for b in data["bound_incarnation"]:
            got = bound_incarnation(b["node_id"], bytes.fromhex(b["nonce_hex"]))
            self.report("bound_incarnation " + got, [("incarnation", got, b["incarnation"]),
                        ("bound", is_bound_to(b["incarnation"], b["node_id"]), True)], "bound to " + b["node_id"])
        pins, valid = {data["owner"]: data["fingerprint"]}, data["valid"]
        state, code, batch, digests = verdict(Receiver(RECEIVER, pins=pins), valid["hex"])
        checks = [("verdict", (state, code), ("accepted", None))]
        if state == "accepted":
            checks += [("digests", [d.hex() for d in digests], valid["digests"]),
                       ("message_hex", seal_message(batch["seals"][0]).hex(), valid["message_hex"]),
                       ("key fingerprint", hashlib.sha256(batch["seals"][0]["key"]).hexdigest(), data["fingerprint"]),
                       ("canonical content", [canonical_content(c) for c in batch["changes"]],
                        [c["content"] for c in batch["changes"]])]
        self.report(valid["name"], checks, f"accepted; {len(valid['digests'])} digests, message_hex, pin and "
                    "canonical content agree; ECDSA verified by openssl")
        for vector in data["refused"]:
            receiver = Receiver(RECEIVER, pins=pins)
            receiver.receive(bytes.fromhex(valid["hex"]))  # the receiver took `valid` first (vectors README)
            state, code, why, _ = verdict(receiver, vector["hex"])
            checks = [("verdict", (state, code), ("refused", vector["error"]))]
            if vector["name"] == "seal_other_node":  # §5.2.5 "What seals do not stop": taken when fresh
                fresh = verdict(Receiver(RECEIVER, pins=pins), vector["hex"])[:2]
                checks.append(("verdict at a receiver that never took seal_valid", fresh, ("accepted", None)))
            self.report(vector["name"], checks, f"refused {code} ({why})")

    def batch_json(self):
        """batch.json carries no seals: canonical content is checked and the §5.2.5 verdict shown."""
        for vector in self.load("batch.json")["vectors"]:
            batch = decode_batch(bytes.fromhex(vector["hex"]))
            state, code, why, _ = verdict(Receiver(RECEIVER), vector["hex"])
            self.report(vector["name"], [("canonical content", [canonical_content(c) for c in batch["changes"]],
                                          [c["content"] for c in batch["changes"]])],
                        f"{len(batch['changes'])} change(s), {len(batch['seals'])} seals; under §5.2.5 a receiver: "
                        + (f"refused {code} ({why})" if code else state))

    def session_transcript(self):
        """session_transcript.json: BATCH seals by rules 1, 2, 4 (keys and signatures are declared
        stand-ins: rule 3 skipped), the published `seals`, and HISTORY probes (§5.10, §7.2.3)."""
        data = self.load("session_transcript.json")
        receivers = {side: Receiver(data[side]["node_id"], [data[side]["incarnation"]], verify=False)
                     for side in ("phone", "mac")}
        known = {}  # (origin, seq) -> write digest of every write delivered
        for session in data["sessions"]:
            for i, f in enumerate(session["frames"]):
                message = f["message"]
                name = f"transcript {session['name']} #{i} {f['from']} {message['type']}"
                if message["type"] == "batch" and not f.get("lost"):
                    state, code, batch, digests = verdict(receivers["mac" if f["from"] == "phone" else "phone"], f["hex"])
                    checks = [("verdict", (state, code), ("accepted", None))]
                    if state == "accepted":
                        known.update({(c["origin"], c["seq"]): d.hex() for c, d in zip(batch["changes"], digests)})
                        checks.append(("seals", [{"origin": s["origin"], "node_id": s["node_id"],
                                                  "public_key": s["key"].hex(), "signature": s["signature"].hex(),
                                                  "members": [{"seq": q, "digest": d.hex()} for q, d in s["members"]]}
                                                 for s in batch["seals"]], message.get("seals")))
                    self.report(name, checks, "accepted; every change vouched for, origins bound to their sealers"
                                " (signature not checked: stand-in)")
                if message["type"] == "history" and any(o["probes"] for o in message["origins"]):
                    probes = [(o["origin"], p["seq"], p["digest"]) for o in message["origins"] for p in o["probes"]]
                    self.report(name, [(f"probe {o} {q}", known.get((o, q)), d) for o, q, d in probes],
                                f"{len(probes)} probe(s) equal the write digests of the delivered writes")

    def self_test(self):
        """Flip one byte of the valid seal.json frame (a signed write's content, the signature, the key):
        each copy must be refused with forged_change, so the checker demonstrably can fail."""
        data = self.load("seal.json")
        frame, pins = bytes.fromhex(data["valid"]["hex"]), {data["owner"]: data["fingerprint"]}
        batch = decode_batch(frame)
        change, seal = batch["changes"][0], batch["seals"][0]
        text = change["content"].find(b'"text":"')  # flipping a letter inside a string keeps the JSON valid
        for label, at in (("content", change["content_at"] + (text + 8 if text >= 0 else 2)),
                          ("signature", seal["signature_at"] + 10), ("key", seal["key_at"] + 60)):
            altered = bytearray(frame)
            altered[at] ^= 0x01
            state, code, why, _ = verdict(Receiver(RECEIVER, pins=pins), altered.hex())
            self.report(f"self-test: {label} byte {at} flipped", [("verdict", (state, code),
                        ("refused", "forged_change"))], f"refused {code} ({why})")


def main():
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", default=os.path.join(root, "Protocol", "vectors"))
    parser.add_argument("--self-test", action="store_true", help="also check that altered frames are refused")
    args = parser.parse_args()
    checker = Checker(args.vectors)
    checker.seal_json()
    checker.batch_json()
    checker.session_transcript()
    if args.self_test:
        checker.self_test()
    print(f"FAILED: {checker.failures} vector(s) disagree" if checker.failures else "all vectors agree")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
