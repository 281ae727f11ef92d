"""Where the providers find AWS and Kubernetes, without ever holding a client or a credential.

Why: dynamic providers are pickled into the Pulumi state. Clients, sockets and credentials must not
be captured, so each CRUD call builds a short-lived client from non-secret inputs (`region`,
`endpoint_url`, `kubeconfig` path), then stack config seen by `configure()`, then the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pulumi.dynamic import ConfigureRequest, ResourceProvider

# Stack config keys read by `configure()` (project namespace `cilium-ipam`, plus the standard aws:region).
CONFIG_KEYS = {
    "region": ("cilium-ipam:region", "aws:region"),
    "endpoint_url": ("cilium-ipam:endpointUrl",),
    "kubeconfig": ("cilium-ipam:kubeconfig", "kubernetes:kubeconfig"),
}


class ConfiguredProvider(ResourceProvider):
    """A ResourceProvider that remembers non-secret connection defaults from stack config."""

    serialize_as_secret_always = False  # nothing secret is ever captured (DESIGN: dynamic provider rules)

    def __init__(self) -> None:
        super().__init__()
        self.settings: dict[str, str] = {}

    def configure(self, req: ConfigureRequest) -> None:
        for name, keys in CONFIG_KEYS.items():
            values = [req.config.get(key) for key in keys]
            value = next((v for v in values if isinstance(v, str) and v), None)
            if value is None:
                continue
            if name == "kubeconfig" and not os.path.isfile(value):
                continue  # an inline kubeconfig document is a credential: never keep it
            self.settings[name] = value

    def setting(self, props: Mapping[str, Any], name: str) -> str | None:
        value = props.get(name)
        if isinstance(value, str) and value:
            return value
        return getattr(self, "settings", {}).get(name)


def aws_client(service: str, region: str | None, endpoint_url: str | None, quick: bool = False) -> Any:
    """A fresh boto3 client; credentials come from boto3's own chain (env, profile, IRSA, IMDS).

    `quick` bounds connect/read time and retries: preview's best-effort lookups must never hang.
    """
    import boto3  # imported lazily: importing `provider` must stay cheap and side-effect free
    from botocore.config import Config

    config = Config(connect_timeout=5, read_timeout=10, retries={"max_attempts": 2}) if quick else None
    session = boto3.session.Session(region_name=region or None)
    return session.client(service, endpoint_url=endpoint_url or None, config=config)


def kube_client(kubeconfig: str | None) -> Any:
    """A fresh kubernetes ApiClient from a kubeconfig path, else $KUBECONFIG, else in-cluster config."""
    from kubernetes import client, config

    path = kubeconfig or os.environ.get("KUBECONFIG")
    if path:
        return config.new_client_from_config(config_file=path)
    configuration = client.Configuration()
    config.load_incluster_config(client_configuration=configuration)
    return client.ApiClient(configuration)


def aws_error_code(error: Exception) -> str:
    """The AWS error code of a botocore ClientError, or '' for anything else."""
    response = getattr(error, "response", None)
    if isinstance(response, Mapping):
        return str(response.get("Error", {}).get("Code", ""))
    return ""
