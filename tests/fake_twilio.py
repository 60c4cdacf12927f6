"""A fake Twilio for tests: an ``HttpClient`` for ``twilio.rest.Client(http_client=...)`` that records every
message the REST API is asked to send (and can fail on demand), and webhook requests signed exactly as Twilio
signs them."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any
from urllib.parse import urlsplit

from twilio.http import HttpClient
from twilio.http.response import Response
from twilio.request_validator import RequestValidator
from twilio.rest import Client

ACCOUNT_SID = "AC" + "0" * 32
AUTH_TOKEN = "test-auth-token-0123456789abcdef"
OUR_NUMBER = "+15017122661"
PUBLIC_URL = "https://moderator.example.org"
OUR_WHATSAPP = "whatsapp:+14155238886"
"""Twilio's WhatsApp sandbox sender (a production sender is a WhatsApp-enabled number of the account)."""


@dataclass
class FakeTwilio(HttpClient):  # type: ignore[misc]  # twilio ships no types: its HttpClient is Any here
    """Answers ``POST .../Messages.json`` (and a ``GET`` of the account) like Twilio; ``fail[to]`` holds (status, code)
    errors used up in order."""

    sent: list[dict[str, str]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    clock: Callable[[], float] = time.time
    created: list[float] = field(default_factory=list)
    """When each message of ``sent`` was created."""
    refuse: bool = False
    """Every request is answered 401, as Twilio answers a wrong account or key (one revoked while running)."""
    received: list[tuple[dict[str, str], float]] = field(default_factory=list)
    """Messages people sent us (``heard``), with when: Twilio's log lists them as it lists ours."""
    fail_later: dict[str, int] = field(default_factory=dict)
    """Addresses whose messages Twilio takes (201, queued) and then reports failed with this error code, as it
    does for WhatsApp's window (63016), a block (63014) or a phone that left the sandbox (63015)."""
    reports: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    """The status callbacks Twilio has yet to post (URL, form), oldest first (``take_reports``)."""

    def __post_init__(self) -> None:
        super().__init__(logger=None, is_async=False)

    def request(self, method: str, uri: str, params: Any = None, data: Any = None, headers: Any = None,
                auth: Any = None, timeout: Any = None, allow_redirects: bool = False) -> Response:
        form = {k: str(v) for k, v in dict(data or {}).items()}
        self.requests.append({"method": method, "uri": uri, "data": form, "auth": auth})
        if self.refuse:
            return Response(401, json.dumps({"code": 20003, "message": "Authenticate", "status": 401}))
        assert auth == (ACCOUNT_SID, AUTH_TOKEN)
        if method == "GET" and urlsplit(uri).path == f"/2010-04-01/Accounts/{ACCOUNT_SID}.json":
            return Response(200, json.dumps({"sid": ACCOUNT_SID, "status": "active", "friendly_name": "fake"}))
        assert urlsplit(uri).path == f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json", uri
        if method == "GET":
            return self._list({k: str(v) for k, v in dict(params or {}).items()})
        assert method == "POST", method
        to = form["To"]
        if self.fail.get(to):
            status, code = self.fail[to].pop(0)
            return Response(status, json.dumps({"code": code, "message": "fake failure", "status": status}))
        self.sent.append(form)
        self.created.append(self.clock())
        sid = f"SM{len(self.sent):032x}"
        if "StatusCallback" in form:
            later = self.fail_later.get(to)
            report = status_report(sid, "failed" if later else "sent", to, error_code=str(later) if later else None,
                                   sender=form.get("From", OUR_NUMBER))
            self.reports.append((form["StatusCallback"], report))
        return Response(201, json.dumps({"sid": sid, "status": "queued", "to": to, "body": form.get("Body", ""),
                                         "num_segments": "1", "account_sid": ACCOUNT_SID}))

    def _list(self, query: dict[str, str]) -> Response:
        """Messages we sent, newest first, filtered by To and From as the REST API does (one page). A message
        Twilio has only queued has no send date yet, only its creation date."""
        log = [(f"SM{i:032x}", m, self.created[i - 1]) for i, m in enumerate(self.sent, 1)]
        log += [(m["MessageSid"], m, at) for m, at in self.received]
        log.sort(key=lambda entry: entry[2])
        found = [(sid, m, at) for sid, m, at in log
                 if m["To"] == query.get("To", m["To"]) and m.get("From") == query.get("From", m.get("From"))]
        size = int(query.get("PageSize", "50"))
        messages = [{"sid": sid, "status": "queued", "to": m["To"], "from": m.get("From"), "body": m.get("Body", ""),
                     "num_segments": "1", "account_sid": ACCOUNT_SID, "date_sent": None,
                     "date_created": formatdate(at, usegmt=True)}
                    for sid, m, at in reversed(found)][:size]
        return Response(200, json.dumps({"messages": messages, "next_page_uri": None, "page": 0, "page_size": size,
                                         "uri": "/2010-04-01/Accounts/x/Messages.json"}))

    def heard(self, form: dict[str, str]) -> None:
        """A person's message reached Twilio (it then calls our webhook): its log lists it from now on."""
        self.received.append((form, self.clock()))

    def take_reports(self) -> list[tuple[str, dict[str, str]]]:
        """The status callbacks Twilio would post now, and forget them."""
        taken, self.reports = self.reports, []
        return taken

    def sids_to(self, number: str) -> list[str]:
        """The SIDs of every text sent to a number, in order (as the REST API answered them)."""
        return [f"SM{i:032x}" for i, m in enumerate(self.sent, 1) if m["To"] == number]

    def to(self, number: str) -> list[str]:
        """Every text sent to a number, in order."""
        return [m["Body"] for m in self.sent if m["To"] == number]

    def sent_bodies(self) -> list[str]:
        return [m["Body"] for m in self.sent]

    def by_number(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for m in self.sent:
            out[m["To"]].append(m["Body"])
        return out


def client(fake: FakeTwilio) -> Client:
    return Client(ACCOUNT_SID, AUTH_TOKEN, http_client=fake)


def incoming(sender: str, body: str, sid: str, *, to: str = OUR_NUMBER) -> dict[str, str]:
    """The form fields Twilio posts for one incoming SMS."""
    return {
        "ToCountry": "US",
        "SmsMessageSid": sid,
        "NumMedia": "0",
        "SmsSid": sid,
        "SmsStatus": "received",
        "Body": body,
        "To": to,
        "NumSegments": "1",
        "MessageSid": sid,
        "AccountSid": ACCOUNT_SID,
        "From": sender,
        "ApiVersion": "2010-04-01",
    }


def status_report(sid: str, status: str, to: str, *, error_code: str | None = None,
                  sender: str = OUR_NUMBER) -> dict[str, str]:
    """The form fields Twilio posts to a text's ``StatusCallback`` when its delivery status changes."""
    form = {
        "AccountSid": ACCOUNT_SID,
        "ApiVersion": "2010-04-01",
        "From": sender,
        "MessageSid": sid,
        "MessageStatus": status,
        "SmsSid": sid,
        "SmsStatus": status,
        "To": to,
    }
    if error_code is not None:
        form["ErrorCode"] = error_code
    return form


def incoming_whatsapp(sender: str, body: str, sid: str, *, profile: str = "",
                      to: str = OUR_WHATSAPP) -> dict[str, str]:
    """The form fields Twilio posts for one incoming WhatsApp message (``sender``: ``whatsapp:+...``): an SMS's,
    less the country, with the message type and the sender's WhatsApp id."""
    form = {k: v for k, v in incoming(sender, body, sid, to=to).items() if k != "ToCountry"}
    form.update(MessageType="text", WaId=sender.removeprefix("whatsapp:+"))
    if profile:
        form["ProfileName"] = profile
    return form


def signature(url: str, form: dict[str, str], token: str = AUTH_TOKEN) -> str:
    """``X-Twilio-Signature`` for a POST of ``form`` to ``url``, computed as Twilio computes it."""
    return str(RequestValidator(token).compute_signature(url, form))
