"""Drop-in computers for the agent frameworks people already use:

- `holm.compat.openai_agents`: the OpenAI Agents SDK's `Computer` and
  `AsyncComputer` (needs ``openai-agents``);
- `holm.compat.anthropic`: Anthropic's computer-use tool (``computer_20251124``);
- `holm.compat.e2b_desktop`: E2B Desktop's `Sandbox` method names.

Each is imported by its own name, so a framework that is not installed is
not needed.
"""
