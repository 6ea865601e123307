"""Certificates and passwords for a venue broker, made with the system's own tools: the
`openssl` CLI (a CA and a server certificate signed by it) and `mosquitto_passwd` (a
mosquitto password file). Nothing here speaks TLS: mosquitto and the MQTT client library do.

  make_ca(dir)                     -> (ca.crt, ca.key)       the venue's CA, DAYS valid
  make_server_cert(dir, ca, names) -> (server.crt, server.key)  for the broker, names as its
                                      subjectAltName (IPs and DNS names the tables dial)
  password_file(path, users)       -> path                   {user: password}, hashed
"""
import ipaddress
import os
import shutil
import subprocess

DAYS = 825                 # a venue CA outlives a season; browsers' limit for a server cert
KEY_BITS = 2048            # RSA: what every TLS stack, mbedTLS on a board too, takes


class CertError(Exception):
    pass


def _run(args, what):
    exe = shutil.which(args[0]) or (os.path.join("/usr/bin", args[0])
                                    if os.access(os.path.join("/usr/bin", args[0]), os.X_OK)
                                    else None)
    if exe is None:
        raise CertError("%s is not installed: %s (apt-get install -y %s)"
                        % (args[0], what, "openssl" if args[0] == "openssl" else "mosquitto"))
    r = subprocess.run([exe] + args[1:], capture_output=True, text=True)
    if r.returncode != 0:
        raise CertError("%s failed: %s" % (what, (r.stderr or r.stdout).strip()))


def make_ca(directory, name="duelclock venue CA"):
    crt, key = os.path.join(directory, "ca.crt"), os.path.join(directory, "ca.key")
    _run(["openssl", "req", "-x509", "-newkey", "rsa:%d" % KEY_BITS, "-nodes", "-keyout", key,
          "-out", crt, "-days", str(DAYS), "-subj", "/CN=" + name,
          "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign"], "making the CA")
    return crt, key


def make_server_cert(directory, ca, names=("127.0.0.1", "localhost"), stem="server"):
    """A server certificate signed by ca (crt, key) for names (the first is its CN)."""
    crt = os.path.join(directory, stem + ".crt")
    key = os.path.join(directory, stem + ".key")
    csr = os.path.join(directory, stem + ".csr")
    ext = os.path.join(directory, stem + ".ext")
    alt = []
    for n in names:
        try:
            ipaddress.ip_address(n)
            alt.append("IP:" + n)
        except ValueError:
            alt.append("DNS:" + n)
    with open(ext, "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=%s\n" % ",".join(alt))
    _run(["openssl", "req", "-newkey", "rsa:%d" % KEY_BITS, "-nodes", "-keyout", key,
          "-out", csr, "-subj", "/CN=" + names[0]], "making the server key")
    _run(["openssl", "x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1],
          "-CAcreateserial", "-out", crt, "-days", str(DAYS), "-extfile", ext],
         "signing the server certificate")
    os.remove(csr)
    os.remove(ext)
    return crt, key


def password_file(path, users):
    """mosquitto's password file at path for {user: password} (salted hashes)."""
    if os.path.exists(path):
        os.remove(path)
    for n, (user, password) in enumerate(sorted(users.items())):
        _run(["mosquitto_passwd", "-b"] + (["-c"] if n == 0 else []) + [path, user, password],
             "writing the broker's password file")
    return path
