"""The secret filter itself (vault/secret_filter.py): what it removes, what it leaves alone, that it
uses every detector of the library it was reviewed against, and that it never touches the network."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from vodou_desktop.vault import Vault, secret_filter
from vodou_desktop.vault.secret_filter import scrub_text

ROOT = Path(__file__).resolve().parents[3]
GITHUB = "ghp_" + "Z8q2Lw5Rt7Yx1Kc4Vb9Nm3Pj6Hd0Fs2Ga8Ue"
AWS_ID = "AKIAZ7Q4M2LK8XJ3WPRT"


def pem(kind: str = "rsa") -> str:
    if kind == "rsa":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        fmt = serialization.PrivateFormat.TraditionalOpenSSL
    else:
        key = ed25519.Ed25519PrivateKey.generate()  # type: ignore[assignment]
        fmt = serialization.PrivateFormat.OpenSSH
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()


def body_lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line and not line.startswith("-----")]


JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")


@pytest.mark.parametrize(("text", "secret", "kind"), [
    (f"my token is {GITHUB} keep it safe", GITHUB, "GitHub Token"),
    (f"the bucket key id is {AWS_ID}.", AWS_ID, "AWS Access Key"),
    ("aws_secret_access_key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lk3Rq2v'", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lk3Rq2v",
     "AWS Access Key"),
    ("db postgres://admin:Zq8rT4pLmX@db.internal.example/app", "Zq8rT4pLmX", "Basic Auth Credentials"),
    ('DB_PASSWORD="Tr0ub4dor&3xk"', "Tr0ub4dor&3xk", "Secret Keyword"),
    ("xoxb-2931042750-1231242512356-Aa8bC7dD6eE5fF4gG3hH2iI1 for the bot",
     "xoxb-2931042750-1231242512356-Aa8bC7dD6eE5fF4gG3hH2iI1", "Slack Token"),
    ("sk_live_51H8r2KLmN0pQ4rS6tU8vW0xY stripe", "sk_live_51H8r2KLmN0pQ4rS6tU8vW0xY", "Stripe Access Key"),
    (f"jwt {JWT} expires soon", JWT, "JSON Web Token"),
])
def test_each_kind_is_replaced_by_its_marker(text: str, secret: str, kind: str) -> None:
    result = scrub_text(text)
    assert result.kinds == (kind,) and f"[secret removed: {kind}]" in result.text
    assert secret not in result.text and secret[-8:] not in result.text and secret[:8] not in result.text
    at = text.index(secret)
    assert result.text == text[:at] + f"[secret removed: {kind}]" + text[at + len(secret):]  # the rest stays


def test_a_token_longer_than_the_pattern_leaves_no_tail_and_sentences_stay() -> None:
    result = scrub_text(f"Token {GITHUB}XyZ9. Next sentence stays.")
    assert result.text == "Token [secret removed: GitHub Token]. Next sentence stays."


@pytest.mark.parametrize("kind", ["rsa", "openssh"])
@pytest.mark.parametrize("layout", ["block", "one line", "no end line", "inside prose"])
def test_a_private_key_goes_whole(kind: str, layout: str) -> None:
    block = pem(kind)
    text = {
        "block": f"Here is the key:\n{block}\nthanks",
        "one line": f"key: {' '.join(block.splitlines())} end",
        "no end line": "\n".join(block.splitlines()[:-1]) + "\n\nThe rest is prose about the server.",
        "inside prose": f"We rotated it on Monday.\n\n{block}\n\nThe old one is revoked.",
    }[layout]
    result = scrub_text(text)
    assert result.kinds == ("Private Key",)
    for line in body_lines(block):
        assert line[:16] not in result.text and line[-16:] not in result.text
    assert "PRIVATE KEY" not in result.text.replace("[secret removed: Private Key]", "")
    for words in ("Here is the key:", "thanks", "The rest is prose about the server.", "The old one is revoked."):
        if words in text:
            assert words in result.text


ORDINARY = [
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the build",
    "the request id was 123e4567-e89b-12d3-a456-426614174000 and it failed twice",
    "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae is the image digest",
    "pin numpy 1.26.4 and torch 2.13.0+cpu; python 3.11.9",
    "docs at https://example.com/a/b?c=d&e=f#g and http://localhost:8080/health",
    "The password manager is 1Password; my API key rotation is on Tuesdays.",
    "the secret to good bread is a long cold proof",
    "Set the env var API_KEY from the vault, never in the repo.",
    "const apiKey = process.env.WEATHER_API_KEY;",
    "password = get_password_from_keyring()",
    "the key is in ${SECRET_KEY} at deploy time",
    "my phone is +44 20 7946 0958, office 10.0.0.12",
    "base64 of hello is aGVsbG8gd29ybGQ=",
    "app.config['SECRET_KEY'] = 'your_secret_key_here'",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert scrub_text(text).text == text


def test_the_quality_set_has_no_false_positive() -> None:
    """Every memory of the repository's own quality set (5,171 realistic memories) comes back
    unchanged (bench/secrets.py also reports LoCoMo and BEAM)."""
    rows = [json.loads(line) for line in (ROOT / "bench/data/quality/memories.jsonl").read_text().splitlines()]
    changed = [r["text"] for r in rows if scrub_text(r["text"]).text != r["text"]]
    assert len(rows) > 5000 and changed == []


def test_every_detector_of_the_library_is_used_or_excluded_with_a_reason() -> None:
    """A new detector in a new detect-secrets release is reviewed, not silently skipped."""
    from detect_secrets import plugins
    from detect_secrets.plugins.base import BasePlugin

    for module in pkgutil.iter_modules(plugins.__path__):
        importlib.import_module(f"detect_secrets.plugins.{module.name}")

    def concrete(cls: type) -> set[str]:
        found = set()
        for sub in cls.__subclasses__():
            if isinstance(getattr(sub, "secret_type", None), str):
                found.add(sub.__name__)
            found |= concrete(sub)
        return found

    used = {name for _, name in secret_filter.DETECTORS}
    assert concrete(BasePlugin) == used | set(secret_filter.EXCLUDED)
    assert not used & set(secret_filter.EXCLUDED) and all(secret_filter.EXCLUDED.values())


def test_the_keyword_shortcut_finds_what_the_keyword_detector_finds() -> None:
    """The filter runs the keyword detector only on lines with one of its keywords and a quote; over
    realistic lines and lines built to match, that finds exactly what running it everywhere finds."""
    from detect_secrets.plugins.keyword import KeywordDetector

    detector = KeywordDetector()
    lines = [json.loads(line)["text"] for line in
             (ROOT / "bench/data/quality/memories.jsonl").read_text().splitlines()][:2000]
    lines += [f'{k} {op} {q}Zq8rT4pLm9{q}' for k in ("password", "api_key", "db_pass", "secret", "contraseña",
                                                    "PRIV_KEY", "authKey")
              for op in ("=", ":", ":=", "==", "=>") for q in ('"', "'")]
    loaded = secret_filter._Detector.get()
    for line in lines:
        everywhere = set(detector.analyze_string(line))
        shortcut = {v for _, text in secret_filter._keyword_lines(line, loaded.keyword_hint)
                    for v in detector.analyze_string(text)}
        assert shortcut == everywhere, line


def test_the_filter_never_opens_a_connection(tmp_path: Path) -> None:
    """Loading the library and scrubbing every kind raises no audit event of a connection, a name
    lookup or a request (no verify call, no download), in a fresh interpreter so the import itself
    is watched too. (urllib3's import binds a socket to ::1 to learn whether IPv6 exists: local.)"""
    code = f"""
import sys
events = []
NET = ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.sendto", "socket.sendmsg",
       "urllib.Request", "http.client.connect")
sys.addaudithook(lambda name, args: events.append(name) if name in NET else None)
from vodou_desktop.vault.secret_filter import scrub_text
texts = {json.dumps([f"{GITHUB} {AWS_ID}", "xoxb-2931042750-1231242512356-Aa8bC7dD6eE5fF4gG3hH2iI1",
                     "sk_live_51H8r2KLmN0pQ4rS6tU8vW0xY", 'password = "Zq8rT4pLm9"', pem("rsa")])}
assert all(scrub_text(t).kinds for t in texts)
print(sorted(set(events)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_setting_turns_it_off_for_one_source_only(vault: Vault) -> None:
    def write(source: str) -> tuple[str, list[str]]:
        def job(conn, change):  # type: ignore[no-untyped-def]
            return secret_filter.scrub(conn, change, f"token {GITHUB}", source), change.secrets_removed

        return vault.write(job)  # type: ignore[no-any-return]

    vault.write(lambda c, ch: secret_filter.set_filter(c, ch, "cli", False))
    assert write("cli") == (f"token {GITHUB}", [])
    assert write("mcp") == ("token [secret removed: GitHub Token]", ["GitHub Token"])
    vault.write(lambda c, ch: secret_filter.set_filter(c, ch, "cli", True))
    assert write("cli")[1] == ["GitHub Token"]
    states = vault.read(secret_filter.filter_states)
    assert all(states.values()) and "capture" in states


def test_a_key_is_removed_before_extraction_splits_it(vault: Vault) -> None:
    """An extractor that keeps every line (one bullet per line) never sees a key's body lines: the
    window's text is scrubbed before extraction."""
    from vodou_desktop.ingest.extract import Bullet
    from vodou_desktop.ingest.window import Entry, store_window
    from vodou_desktop.vault import FactFilter
    from vodou_desktop.vault import query as q

    block = pem("rsa")

    def every_line(text: str) -> list[Bullet]:
        return [Bullet(line, "fact") for line in text.splitlines() if line.strip()]

    report = vault.write(lambda c, ch: store_window(c, ch, [Entry(f"Our deploy key:\n{block}", "zsh")],
                                                     extractor=every_line))
    stored = [f.text for f in vault.read(lambda c: q.facts_by_ids(c, report.fact_ids, FactFilter(project=None)))]
    # the person's message kept whole, then one memory per line: the key is gone from each, counted once
    assert stored == ["Our deploy key:\n[secret removed: Private Key]", "Our deploy key:",
                      "[secret removed: Private Key]"] and report.secrets_removed == ["Private Key"]


def test_a_document_key_across_a_chunk_edge_goes_whole(vault: Vault) -> None:
    from vodou_desktop.ingest.remember import Origin, save_document

    block = pem("rsa")
    text = ("Long notes about the servers. " * 40) + block.replace("\n", "") + " And more notes after it." * 40
    doc = save_document(vault, text, Origin(kind="library", url="https://example.org/notes", title="notes"))
    chunks = vault.read(lambda c: [r[0] for r in c.execute("SELECT text FROM chunks WHERE document_id = ?", (doc,))])
    joined = "".join(chunks)
    assert doc.secrets_removed == ("Private Key",) and "[secret removed: Private Key]" in joined
    assert not any(line[:16] in joined for line in body_lines(block))


# One sample a detector finds, for every pattern of every detector used (built here: none is a real key).
_HEX64 = "9f" * 32
DETECTOR_SAMPLES = [
    "artifactory AKCp5budTFpbypBqQbGJPz3pGCi28pPivfWczqjfYb9drAmd9LbRZbj6UpKFxJXA8ksWGc9fM",
    "token AP6xxxxxxxxxx9Tq2Lm8Rv4Ns7Wk",
    "conn AccountKey=" + "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
    "https://admin:Zq8rT4pLmX@db.internal.example/app",
    "cloudant_password='" + "a" * 64 + "'",
    "https://user:" + _HEX64 + "@acct.cloudant.com",
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "ghp_" + "Z8q2Lw5Rt7Yx1Kc4Vb9Nm3Pj6Hd0Fs2Ga8Ue",
    "glpat-Zq8rT4pLm9xK2vW7yB3nQ",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "mailchimp " + "0123456789abcdef0123456789abcdef" + "-us12",
    "//registry.npmjs.org/:_authToken=npm_Zq8rT4pLm9xK2vW7yB3nQ5tR8sU1vW2xY3",
    "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",
    "pypi-AgEIcHlwaS5vcmc" + "Zq8rT4pLm9xK2vW7yB3n" * 4,
    "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",
    "xoxb-2931042750-1231242512356-Aa8bC7dD6eE5fF4gG3hH2iI1",
    "https://hooks.slack.com/services/T12345678/B12345678/Zq8rT4pLm9xK2vW7yB3n",
    "softlayer_api_key = '" + "abcdef0123456789" * 4 + "'",
    "https://api.softlayer.com/soap/v3/" + "abcdef0123456789" * 4,
    "sq0csp-" + "Zq8rT4pLm9xK2vW7yB3nQ5tR8sU1vW2xY3zA4bC5dE6",
    "sk_live_51H8r2KLmN0pQ4rS6tU8vW0xY",
    "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
    "AC" + "0123456789abcdef0123456789abcdef",
    "SK" + "0123456789abcdef0123456789abcdef",
    "AKIAZ7Q4M2LK8XJ3WPRT",
    "aws_secret_access_key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lk3Rq2v'",
    'DB_PASSWORD="Tr0ub4dor&3xk"', "contraseña = 'Tr0ub4dor&3xk'", "api_key: 'Zq8rT4pLm9'",
    "ibm_cloud_iam_api_key = '" + "Zq8rT4pLm9xK2vW7yB3nQ5tR8sU1vW2xY3zA4bC5dE6f" + "'",
    "ibm_cos_secret_access_key = '" + "abcdef0123456789" * 3 + "'",
    "PuTTY-User-Key-File-2: ssh-rsa",
]


def test_the_shortcut_never_skips_a_text_a_detector_finds_something_in() -> None:
    """``might_hold_secret`` lets the filter skip loading the library for a text no detector could
    match; for a sample of every detector's every pattern, every private key layout, and every memory of
    the quality set, a text ``find`` finds something in is never skipped."""
    samples = [*DETECTOR_SAMPLES, *(pem(kind) for kind in ("rsa", "ec", "ed25519"))]
    found = [s for s in samples if secret_filter.find(f"note: {s} ok")]
    assert len(found) >= len(samples) - 4, sorted(set(samples) - set(found))  # the samples are real matches
    rows = [json.loads(line)["text"] for line in (ROOT / "bench/data/quality/memories.jsonl").read_text().splitlines()]
    for text in [f"note: {s} ok" for s in samples] + rows:
        assert secret_filter.might_hold_secret(text) or not secret_filter.find(text), text
    skipped = [t for t in rows if not secret_filter.might_hold_secret(t)]
    assert len(skipped) > len(rows) // 2  # most plain memories never need the library


def test_a_plain_note_is_stored_without_loading_the_library() -> None:
    import subprocess
    import sys

    probe = ("import sys; from vodou_desktop.vault.secret_filter import scrub_text;"
             " r = scrub_text('Ana plays the violin on Saturdays at the community hall.');"
             " print(r.kinds, 'detect_secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "() False"
