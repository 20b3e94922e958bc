#!/usr/bin/env python3
"""A loopback SMTP server for the email channel's tests (docs/notifications.md "Email").

Speaks enough RFC 5321 for a real client (libcurl): EHLO/HELO, STARTTLS (RFC 3207), AUTH PLAIN
and LOGIN (RFC 4954, offered only once the session is encrypted), MAIL, RCPT, DATA (with dot
unstuffing), RSET, NOOP, QUIT. It refuses MAIL before TLS (530) and, with --user, before AUTH
(530), so a client that skipped either cannot deliver. Each accepted message is appended to
--out as one JSON line {mail_from, rcpt_to, data, tls, user}. Scripted faults: --fail CODE,...
answers the end of DATA of the first messages with those codes (e.g. 451 then 550), and
--no-starttls leaves STARTTLS out of EHLO. --implicit-tls speaks TLS from the first byte
(smtps). Prints the port it listens on (127.0.0.1, ephemeral), then serves until killed.
Standard library only.
"""

import argparse
import base64
import json
import socket
import socketserver
import ssl
import sys
import threading


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.faults = [int(c) for c in args.fail.split(",") if c] if args.fail else []
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(args.cert, args.key)

    def next_fault(self):
        with self.lock:
            return self.faults.pop(0) if self.faults else 0

    def record(self, message):
        with self.lock:
            with open(self.args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps(message) + "\n")


class Session(socketserver.StreamRequestHandler):
    timeout = 30

    def setup(self):
        state = self.server.state
        self.tls = False
        if state.args.implicit_tls:
            self.request = state.context.wrap_socket(self.request, server_side=True)
            self.tls = True
        super().setup()

    def reply(self, text):
        self.wfile.write((text + "\r\n").encode("ascii"))
        self.wfile.flush()

    def line(self):
        raw = self.rfile.readline(4096)
        if not raw:
            raise EOFError
        return raw.decode("utf-8", "replace").rstrip("\r\n")

    def handle(self):
        state = self.server.state
        args = state.args
        user = None
        mail_from = None
        rcpt = []
        try:
            self.reply("220 sink.test ESMTP pulse test sink")
            while True:
                command = self.line()
                verb = command.split(" ", 1)[0].upper()
                rest = command[len(verb):].strip()
                if verb in ("EHLO", "HELO"):
                    lines = ["sink.test"]
                    if verb == "EHLO":
                        if not self.tls and not args.no_starttls:
                            lines.append("STARTTLS")
                        if self.tls:
                            lines.append("AUTH PLAIN LOGIN")
                        lines.append("8BITMIME")
                    for i, text in enumerate(lines):
                        self.reply(("250 " if i == len(lines) - 1 else "250-") + text)
                elif verb == "STARTTLS":
                    if self.tls or args.no_starttls:
                        self.reply("503 already encrypted" if self.tls else "502 not offered")
                        continue
                    self.reply("220 go ahead")
                    self.request = state.context.wrap_socket(self.request, server_side=True)
                    self.rfile = self.request.makefile("rb")
                    self.wfile = self.request.makefile("wb")
                    self.tls = True
                    user, mail_from, rcpt = None, None, []
                elif verb == "AUTH":
                    if not self.tls:
                        self.reply("538 encryption required for authentication")
                        continue
                    parts = rest.split(" ", 1)
                    mechanism = parts[0].upper()
                    if mechanism == "PLAIN":
                        blob = parts[1] if len(parts) > 1 else None
                        if blob is None:
                            self.reply("334 ")
                            blob = self.line()
                        try:
                            _, name, password = base64.b64decode(blob).decode().split("\0")
                        except ValueError:
                            self.reply("501 malformed")
                            continue
                    elif mechanism == "LOGIN":
                        if len(parts) > 1:
                            name = base64.b64decode(parts[1]).decode()
                        else:
                            self.reply("334 " + base64.b64encode(b"Username:").decode())
                            name = base64.b64decode(self.line()).decode()
                        self.reply("334 " + base64.b64encode(b"Password:").decode())
                        password = base64.b64decode(self.line()).decode()
                    else:
                        self.reply("504 unrecognized authentication type")
                        continue
                    if args.user is not None and (name, password) == (args.user, args.password):
                        user = name
                        self.reply("235 authenticated")
                    else:
                        self.reply("535 authentication credentials invalid")
                elif verb == "MAIL":
                    if not self.tls:
                        self.reply("530 must issue a STARTTLS command first")
                    elif args.user is not None and user is None:
                        self.reply("530 authentication required")
                    else:
                        mail_from = rest[len("FROM:"):].strip().strip("<>").split(">")[0]
                        rcpt = []
                        self.reply("250 ok")
                elif verb == "RCPT":
                    if mail_from is None:
                        self.reply("503 need MAIL first")
                    else:
                        rcpt.append(rest[len("TO:"):].strip().strip("<>"))
                        self.reply("250 ok")
                elif verb == "DATA":
                    if not rcpt:
                        self.reply("503 need RCPT first")
                        continue
                    self.reply("354 end with <CRLF>.<CRLF>")
                    lines = []
                    while True:
                        text = self.line()
                        if text == ".":
                            break
                        lines.append(text[1:] if text.startswith("..") else text)
                    fault = state.next_fault()
                    if fault:
                        self.reply("%d scripted failure" % fault)
                    else:
                        state.record({"mail_from": mail_from, "rcpt_to": rcpt,
                                      "data": "\r\n".join(lines) + "\r\n", "tls": self.tls,
                                      "user": user})
                        self.reply("250 accepted")
                    mail_from, rcpt = None, []
                elif verb == "RSET":
                    mail_from, rcpt = None, []
                    self.reply("250 ok")
                elif verb == "NOOP":
                    self.reply("250 ok")
                elif verb == "QUIT":
                    self.reply("221 bye")
                    return
                else:
                    self.reply("502 command not implemented")
        except (EOFError, ConnectionError, ssl.SSLError, socket.timeout, OSError):
            return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--fail", default="")
    parser.add_argument("--no-starttls", action="store_true")
    parser.add_argument("--implicit-tls", action="store_true")
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Session)
    server.state = State(args)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
