"""Gateway services: the writes behind the environment pages and commands."""
