"""`screen --certificate FILE`: keep the collector's signed word on what the gate saw.

Once the runs have settled, the collector certifies the screening (CERTS.md
section 3: `GET /api/v1/screenings/{id}/certificate`, a DSSE envelope) and
the file gets it as the collector serialised it, so a CI job can upload
the exact artifact anybody can check with `badge-collector verify`. The
statement digest named in the reports is the SHA-256 of the envelope's
payload (CERTS.md section 2), read with the same DSSE code that verifies.
"""

from __future__ import annotations

import hashlib
import json
import shlex

from collector.api_client import ApiClient, segment
from collector.certificates.dsse import BadEncoding, NotAnEnvelope, decoded, shape_of
from collector.reports.facts import CertificateFacts
from collector.reports.output import ReportNotWritten, write_report


def save_certificate(
    client: ApiClient, agent_id: str, screening_id: str, target: str, verify_url: str
) -> CertificateFacts | str:
    """The certificate written to `target`, or why it is not."""
    reply = client.get(f"/screenings/{segment(screening_id)}/certificate", agent_id=agent_id)
    if not reply.ok:
        answered = f"{reply.status}: " if reply.status else ""
        return (
            f"the collector did not issue the screening's certificate ({answered}{reply.detail()})"
        )
    # The collector's own bytes: compact JSON in the order it wrote (collector.certificates.dsse).
    text = json.dumps(reply.body, separators=(",", ":"), ensure_ascii=False)
    try:
        payload = decoded(shape_of(text.encode())).payload
    except (NotAnEnvelope, BadEncoding) as exc:
        return f"the collector's certificate is not a DSSE envelope: {exc}"
    try:
        write_report(target, text)
    except ReportNotWritten as exc:
        return f"--certificate: {exc}"
    check = f"badge-collector verify {shlex.quote(target)} --url {shlex.quote(verify_url)}"
    return CertificateFacts(target, hashlib.sha256(payload).hexdigest(), check)
