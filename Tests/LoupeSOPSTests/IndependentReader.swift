#if SOPS
import Foundation
import LoupeTestSupport
import Testing

/// An independent reader of sops files, written from the sops format and nothing of Loupe's: it unwraps
/// the data key with the `age` CLI, opens each `ENC[…]` value with Python's `cryptography` (AES-256-GCM, the
/// path as additional data), recomputes the MAC over the values in the file's order and checks it against
/// the file's, and prints the plaintext as JSON with sorted keys.
enum IndependentReader {
    static let script = #"""
        import base64, hashlib, json, re, subprocess, sys
        import yaml
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        path, keyfile = sys.argv[1], sys.argv[2]
        text = open(path, encoding="utf-8").read()
        doc = yaml.safe_load(text) if path.endswith((".yaml", ".yml")) else json.loads(text)
        sops = doc.pop("sops")
        key = None
        for stanza in sops.get("age") or []:
            opened = subprocess.run(["age", "-d", "-i", keyfile], input=stanza["enc"].encode(), capture_output=True)
            if opened.returncode == 0:
                key = opened.stdout
                break
        assert key is not None and len(key) == 32, "no age stanza opens with the key file"
        aes = AESGCM(key)
        pattern = re.compile(r"^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]$")

        def open_value(value, additional):
            data, iv, tag, kind = pattern.match(value).groups()
            plain = aes.decrypt(base64.b64decode(iv), base64.b64decode(data) + base64.b64decode(tag), additional.encode())
            text = plain.decode()
            if kind == "int": return int(text)
            if kind == "float": return float(text)
            if kind == "bool": return text in ("True", "true", "1", "t", "T", "TRUE")
            return text

        unencrypted_suffix = sops.get("unencrypted_suffix")
        encrypted_suffix = sops.get("encrypted_suffix")
        encrypted_regex = sops.get("encrypted_regex")
        unencrypted_regex = sops.get("unencrypted_regex")
        mac_only = sops.get("mac_only_encrypted", False)
        if not any([unencrypted_suffix, encrypted_suffix, encrypted_regex, unencrypted_regex]):
            unencrypted_suffix = "_unencrypted"

        def encrypts(keys):
            encrypted = True
            if unencrypted_suffix and any(k.endswith(unencrypted_suffix) for k in keys): encrypted = False
            if encrypted_suffix: encrypted = any(k.endswith(encrypted_suffix) for k in keys)
            if unencrypted_regex and any(re.search(unencrypted_regex, k) for k in keys): encrypted = False
            if encrypted_regex: encrypted = any(re.search(encrypted_regex, k) for k in keys)
            return encrypted

        def to_bytes(value):
            if isinstance(value, bool): return b"True" if value else b"False"
            if isinstance(value, int): return str(value).encode()
            if isinstance(value, float):
                text = repr(value)
                return (text[:-2] if text.endswith(".0") else text).encode()
            return value.encode()

        digest = hashlib.sha512()
        if mac_only:
            digest.update(bytes([0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0x0b,
                                 0x0b, 0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69]))

        def walk(value, keys):
            if isinstance(value, dict): return {k: walk(v, keys + [k]) for k, v in value.items()}
            if isinstance(value, list): return [walk(v, keys) for v in value]
            if value is None: return None
            encrypted = encrypts(keys)
            if encrypted and value != "":
                value = open_value(value, ":".join(keys) + ":")
            if not mac_only or encrypted:
                digest.update(to_bytes(value))
            return value

        plain = walk(doc, [])
        mac = open_value(sops["mac"], sops["lastmodified"])
        assert mac == digest.hexdigest().upper(), "MAC mismatch"
        print(json.dumps(plain, sort_keys=True))
        """#

    /// The plaintext of the sops file at `path`, as the independent reader opens it with the identities in
    /// `keyFile`, its MAC checked; nil (and an issue recorded) when it does not open.
    static func open(_ path: String, keyFile: String) throws -> [String: Any]? {
        let result = try run("/usr/bin/env", ["python3", "-c", script, path, keyFile])
        guard result.status == 0 else {
            Issue.record("the independent reader refused \(path): \(result.error)")
            return nil
        }
        return try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
    }
}
#endif
