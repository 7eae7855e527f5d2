"""``hippo doctor``: the configured server's versions, capabilities, memory, indexes and namespaces, and the fix
for every problem found."""

from __future__ import annotations

import click

from .common import connection_options, connection_settings, emit, json_option


@click.command("doctor")
@connection_options("namespace")
@json_option
@click.pass_context
def doctor_cmd(ctx: click.Context, as_json: bool) -> None:
    """Check the configured Neo4j: versions and edition, GDS and what it supports, whether gds.* may run, heap
    and page cache against the largest projection, vector indexes, namespaces; a fix for every problem.
    Exit status 2 when a problem is an error."""
    from ..db import connect_driver
    from ..doctor import diagnose, render

    settings = connection_settings(ctx)
    with connect_driver(settings.uri, settings.auth) as driver:
        report = diagnose(driver, settings.database)
    emit(ctx, {"uri": settings.uri, "database": settings.database, **report}, render(report, settings.uri))
    if any(p["severity"] == "error" for p in report["problems"]):
        ctx.exit(2)
