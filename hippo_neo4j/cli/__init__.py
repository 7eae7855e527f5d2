"""The ``hippo`` command line: a thin shell over the library, one module per group of commands."""

from __future__ import annotations

from typing import Any

import click

from .common import HippoGroup, root_connection_options
from .doctor import doctor_cmd
from .evaluation import eval_cmd
from .memory import (
    delete_cmd, demo_cmd, drop_namespace_cmd, import_openie_cmd, index_cmd, rebuild_facts_cmd, reembed_cmd, stats_cmd,
)
from .query import ask_cmd, query_cmd
from .runtime import neo4j_group
from .serve import mcp_cmd, serve_cmd


@click.group(cls=HippoGroup)
@root_connection_options
@click.pass_context
def cli(ctx: click.Context, **options: Any) -> None:
    """hippo-neo4j: HippoRAG long-term memory on Neo4j + Graph Data Science."""
    ctx.ensure_object(dict)
    ctx.obj["connection_options"] = options


for command in (
    neo4j_group, index_cmd, import_openie_cmd, query_cmd, ask_cmd, stats_cmd, reembed_cmd, rebuild_facts_cmd, delete_cmd,
    drop_namespace_cmd, demo_cmd, eval_cmd, serve_cmd, mcp_cmd, doctor_cmd,
):
    cli.add_command(command)


def main() -> None:
    from ..extract import offline

    offline.THINC_IMPORTS_TORCH = False  # no pipeline the command runs has PyTorch layers (see load_pipeline)
    cli(obj={})


__all__ = ["cli", "main"]
