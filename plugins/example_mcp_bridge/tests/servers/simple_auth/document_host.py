"""A client ID metadata document for junior, served over https on localhost: where a user would publish theirs
(GitHub Pages, say), stood in for locally. Not part of the SDK's example.

``python -m simple_auth.document_host --port D --redirect-port C --cert FILE`` makes a self-signed certificate for
``localhost`` and ``127.0.0.1``, writes it to FILE (point ``SSL_CERT_FILE`` at it so junior and the authorization
server trust it), and serves ``https://localhost:D/client.json``: junior's metadata, its own URL as ``client_id``
and ``http://127.0.0.1:C/callback`` as its one redirect URI (junior's ``--callback-port C``).
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import click


def self_signed(cert: Path, key: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                    x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                       critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))


@click.command()
@click.option("--port", type=int, required=True, help="Port to serve https://localhost:PORT/client.json on")
@click.option("--redirect-port", type=int, required=True, help="junior's --callback-port")
@click.option("--cert", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the certificate (for SSL_CERT_FILE)")
def main(port: int, redirect_port: int, cert: Path) -> None:
    url = f"https://localhost:{port}/client.json"
    document = json.dumps({
        "client_id": url, "client_name": "junior", "redirect_uris": [f"http://127.0.0.1:{redirect_port}/callback"],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path == "/client.json"
            body = document if found else b"not found"
            self.send_response(200 if found else 404)
            self.send_header("content-type", "application/json" if found else "text/plain")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with tempfile.TemporaryDirectory() as folder:
        key = Path(folder) / "key.pem"
        self_signed(cert, key)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server = ThreadingHTTPServer(("localhost", port), Handler)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        click.echo(f"serving {url}", err=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
