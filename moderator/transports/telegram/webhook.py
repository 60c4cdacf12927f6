"""The webhook under ``moderator serve``: one ``POST`` per update, processed before it is answered."""

from __future__ import annotations

import hmac
import json
import logging
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from telegram import Update
from telegram.ext import Application

from ...channels import Running
from .config import CHANNEL, SECRET_HEADER, TelegramSettings
from .handlers import TelegramBot

log = logging.getLogger(__name__)

@dataclass
class Webhook:
    """What the webhook route needs: the application and its handlers."""

    app: Application[Any, Any, Any, Any, Any, Any]
    bot: TelegramBot


def webhook_route(settings: TelegramSettings) -> Route:
    """``POST`` at the webhook path: one update, processed before the answer (a crash before it: a redelivery).

    No update id is remembered here: a redelivered update reaches the service again, which applies its input
    once (its id is stored with it). An update whose input could not be stored is answered 503, which Telegram
    retries; an update that fails for any other reason is answered 200 (it would fail again)."""

    async def webhook(request: Request) -> Response:
        given = request.headers.get(SECRET_HEADER, "")
        if not settings.secret or not hmac.compare_digest(given.encode(), settings.secret.encode()):
            log.warning("refused a Telegram webhook request without the right secret token")
            return Response(status_code=403)
        body = await request.body()  # at most MAX_BODY: the server's body limit counted it as it came
        running: Running = request.app.state.channels[CHANNEL]
        hook: Webhook = running.state
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
                raise ValueError("not an update")
            update = Update.de_json(data, hook.app.bot)
        except Exception:  # any malformed update: Telegram never sends one, so nobody waits for it
            log.info("ignored a Telegram webhook body that is not an update")
            return Response(status_code=400)
        try:
            await hook.app.process_update(update)
        except Exception:  # logged; answering 200 stops Telegram from redelivering an update that cannot work
            log.exception("a Telegram update failed")
        if update.update_id in hook.bot.not_stored:
            hook.bot.not_stored.discard(update.update_id)
            return Response(status_code=503)
        return Response(status_code=200)

    return Route(settings.path, webhook, methods=["POST"])
