"""Project configuration: settings, URL roots, ASGI entry points, the ninja API root."""
