"""The built-in agents, one file each. They install as ``dixit_lab_agents`` and enter the agent
registry as entry points (``pyproject.toml``), like any plugin."""
