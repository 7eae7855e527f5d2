"""Reaching an LLM at any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...): settings from the
environment (``settings``), response-format negotiation remembered per endpoint (``negotiation``), the chat
client with retries that extraction, the reader and the recognition filter share (``client``), and tolerant
parsing of what models write (``parsing``)."""
