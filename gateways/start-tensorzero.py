"""Launcher for TensorZero's gateway (the `tensorzero` wheel embeds it): starts the HTTP gateway
on a port it picks on 127.0.0.1 with the config given as the first argument, prints
`TOOLTAPE_GATEWAY_URL=<origin>` (the profile's `base_path` adds `/openai`), and waits until
tooltape stops it (SIGTERM). Used by gateways/tensorzero.toml."""

import signal
import sys
import threading

import tensorzero

gateway = tensorzero._start_http_gateway(  # the API `patch_openai_client` uses
    config_file=sys.argv[1],
    clickhouse_url=None,
    postgres_url=None,
    valkey_url=None,
    async_setup=False,
)
origin = "/".join(gateway.base_url.split("/")[:3])  # http://127.0.0.1:PORT
print(f"TOOLTAPE_GATEWAY_URL={origin}", flush=True)
done = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: done.set())
done.wait()
