"""A small app behind every guard, served by ``GuardedServer`` in its own process (so the tests can count its files
and its memory): ``python -m tests.guarded_app '<Limits as JSON>'`` prints its port, then serves until killed.

Routes, shaped like ``serve``'s: ``POST /telegram`` (reads its body), ``POST /sms`` and ``/sms/status`` (read a
form, as Twilio's signature check does), ``GET /healthz``, ``GET /page`` (HTML), ``GET /slow`` (an answer that
takes ``?s=`` seconds), ``GET /big`` (8 MB), ``POST /new`` (a page's form), ``GET /stats`` (what the routes
received, the guard's counts, the process's open files and memory)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from moderator.guard import (
    OriginCheck,
    SecurityHeaders,
    StreamingBodyLimit,
)
from moderator.httpserver import WEBHOOK_PATHS, GuardedServer, Limits, guarded_server
from moderator.transports.sms import MAX_BODY as TWILIO_BODY_LIMIT
from moderator.transports.telegram import MAX_BODY as TELEGRAM_BODY_LIMIT

received = {"telegram": 0, "sms": 0}
server: GuardedServer | None = None


async def telegram(request: Request) -> Response:
    async for chunk in request.stream():
        received["telegram"] += len(chunk)
    return Response(status_code=200)


async def sms(request: Request) -> Response:
    form = await request.form()  # as transports.sms does, before its signature check
    received["sms"] += sum(len(str(k)) + len(str(v)) for k, v in form.items())
    return Response("<Response/>", media_type="application/xml")


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def page(request: Request) -> Response:
    return HTMLResponse("<!doctype html><p>a page</p>")


async def slow(request: Request) -> Response:
    await asyncio.sleep(float(request.query_params.get("s", "1")))
    return PlainTextResponse("slow")


async def big(request: Request) -> Response:
    return Response(b"x" * (8 * 1024 * 1024), media_type="application/octet-stream")


async def new(request: Request) -> Response:
    await request.form()
    return PlainTextResponse("opened")


async def stats(request: Request) -> Response:
    assert server is not None
    guard = server.guard
    lines = Path("/proc/self/status").read_text().splitlines()
    status = dict(line.split(":", 1) for line in lines if ":" in line)
    return JSONResponse({
        "received": received, "open": len(guard.open), "waiting": len(guard.waiting), "evicted": guard.evicted,
        "refused": guard.refused, "timed_out": guard.timed_out, "busy": guard.busy,
        "fds": len(os.listdir("/proc/self/fd")), "rss_kb": int(status["VmRSS"].split()[0]),
    })


def build() -> Starlette:
    routes = [
        Route("/telegram", telegram, methods=["POST"]), Route("/sms", sms, methods=["POST"]),
        Route("/sms/status", sms, methods=["POST"]), Route("/healthz", healthz), Route("/page", page),
        Route("/slow", slow), Route("/big", big), Route("/new", new, methods=["POST"]), Route("/stats", stats),
    ]
    return Starlette(routes=routes)


def main() -> None:
    global server
    limits = Limits(**json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}"))
    limited = StreamingBodyLimit(build(), {"/telegram": TELEGRAM_BODY_LIMIT, "/sms": TWILIO_BODY_LIMIT})
    app = SecurityHeaders(OriginCheck(limited, exempt=("/telegram", "/sms")))
    server = guarded_server(app, limits=limits, exempt=(*WEBHOOK_PATHS, "/stats"), log_level="warning")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(limits.backlog)  # connections wait in the queue until the server accepts them
    print(sock.getsockname()[1], flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
