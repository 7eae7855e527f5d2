"""The library served where it is used: ``http`` (``hippo serve``, FastAPI) and ``mcp`` (``hippo mcp``, the MCP
SDK), both over ``memories``: one warm HippoRAG per namespace. Needs the extra: ``pip install 'hippo-neo4j[serve]'``."""
