"""`Boto3Ec2`: the `Ec2Api` port on real EC2 (or a moto server via `endpoint_url`).

    ec2 = Boto3Ec2(region="us-east-1")                                   # production
    ec2 = Boto3Ec2(session=moto_session, endpoint_url=moto_endpoint)    # tests
    ec2 = Boto3Ec2(client=stubbed_client, sleep=fake_sleep, clock=sim)  # Stubber tests

What it adds around botocore:

- Every HTTP request (each page of a describe, each retry) first takes a token for its action from
  the `limiter` (default: Cilium's single `ClientRateLimiter`, `--limit-ipam-api-qps` 4 /
  `--limit-ipam-api-burst` 20; the operator passes `AwsBucketsLimiter`, one bucket per action sized
  like AWS's) and reports the wait and the call's duration + response code to an `Ec2CallObserver`
  (ENI-MET-1). This happens in botocore `before-call` / `after-call` hooks, so paginated requests
  are covered too.
- tenacity retries with exponential backoff and full jitter for RequestLimitExceeded (which also
  halves the limiter's rate), 5xx and connection errors, and for InvalidNetworkInterfaceID.NotFound
  on an ENI this adapter created within `RetryPolicy.consistency_window` seconds (eventual
  consistency, EC2-SIM-6). 4xx user errors are raised at once as typed `Ec2Error`s.
  botocore's own retries are switched off so there is exactly one retry policy.
- All describes return every page (paginators where botocore has them).

Credentials come from the boto3 default chain (or the session given); nothing here logs, stores or
formats them into messages.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from reconciler.clock import Clock, WallClock
from reconciler.ec2 import api
from reconciler.ec2 import boto3_parse as parse
from reconciler.ec2.api import DESCRIBE_PAGE_SIZES, Ec2Error, Filters, make_error
from reconciler.ec2.observe import OK, Ec2CallObserver, NullObserver
from reconciler.ec2.ratelimit import ClientRateLimiter, Ec2RateLimiter

log = logging.getLogger(__name__)
T = TypeVar("T")

_STARTED = "cilium_ipam_started_at"


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 8
    base_delay: float = 0.5  # seconds; full jitter: each wait is uniform in [0, min(max, base*2^n)]
    max_delay: float = 20.0
    consistency_window: float = 60.0  # NotFound on an ENI created this recently is retried


def _snake(action: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in action).lstrip("_")


class Boto3Ec2:
    """See the module docstring."""

    def __init__(
        self,
        *,
        region: str | None = None,
        endpoint_url: str | None = None,
        session: boto3.Session | None = None,
        client: Any = None,
        clock: Clock | None = None,
        sleep: Callable[[float], None] | None = None,
        qps: float = 4.0,
        burst: int = 20,
        adaptive_rate_limit: bool = True,
        retry: RetryPolicy | None = None,
        observer: Ec2CallObserver | None = None,
        page_sizes: Mapping[str, int] | None = None,
        limiter: Ec2RateLimiter | None = None,
    ) -> None:
        """`limiter` replaces the default single bucket built from `qps` / `burst` / `adaptive_rate_limit`."""
        if client is None:
            try:
                client = (session or boto3.Session()).client(
                    "ec2",
                    region_name=region,
                    endpoint_url=endpoint_url,
                    config=Config(retries={"total_max_attempts": 1}, user_agent_extra="cilium-ipam"),
                )
            except NoRegionError:
                raise api.InvalidParameter(
                    "No AWS region is configured for EC2; set AWS_REGION or pass the region option.",
                    code="NoRegion",
                ) from None
        self._client = client
        self._clock = clock or WallClock()
        self._sleep = sleep or time.sleep
        if limiter is None:
            limiter = ClientRateLimiter(
                self._clock, self._sleep, qps=qps, burst=burst, adaptive=adaptive_rate_limit
            )
        self.limiter: Ec2RateLimiter = limiter
        self.retry = retry or RetryPolicy()
        self._observer: Ec2CallObserver = observer or NullObserver()
        self._page_sizes = dict(DESCRIBE_PAGE_SIZES if page_sizes is None else page_sizes)
        self._created_at: dict[str, float] = {}
        events = client.meta.events
        # Registered first on the wildcard node so it also runs ahead of botocore's Stubber.
        events.register_first("before-call.*.*", self._before_call, unique_id="cilium-ipam-before")
        events.register("after-call.ec2.*", self._after_call, unique_id="cilium-ipam-after")

    def __repr__(self) -> str:
        return (
            f"Boto3Ec2(region={self._client.meta.region_name!r}, endpoint={self._client.meta.endpoint_url!r})"
        )

    # --- botocore hooks: per HTTP request --------------------------------------------------------
    def _before_call(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        waited = self.limiter.acquire(model.name)
        self._observer.observe_rate_limit(model.name, waited)
        context[_STARTED] = self._clock.now()

    def _after_call(
        self, http_response: Any, parsed: Mapping[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        status = int(getattr(http_response, "status_code", 200))
        code = OK if status < 300 else str((parsed.get("Error") or {}).get("Code") or status)
        started = context.get(_STARTED, self._clock.now())
        self._observer.observe_call(model.name, code, max(0.0, self._clock.now() - started))

    # --- retries and error translation -----------------------------------------------------------
    def _invoke(self, action: str, call: Callable[[], T], *, eni_ids: Sequence[str] = ()) -> T:
        def attempt() -> T:
            try:
                result = call()
            except ClientError as err:
                typed = self._translate(action, err)
                if isinstance(typed, api.Throttled):
                    self.limiter.on_throttled(action)
                raise typed from None
            except (
                EndpointConnectionError,
                ConnectionClosedError,
                ReadTimeoutError,
                ResponseParserError,
            ) as err:
                raise api.ServerError(
                    f"{action} got no usable answer from EC2 ({type(err).__name__}); retrying with backoff.",
                    code="ConnectionError",
                    action=action,
                ) from None
            except NoCredentialsError:
                raise api.Unauthorized(
                    f"{action} found no AWS credentials; give the operator an IAM role or AWS_* variables.",
                    code="NoCredentials",
                    action=action,
                ) from None
            except BotoCoreError as err:
                raise api.InvalidParameter(
                    f"{action} was rejected by botocore: {err}.", code="ClientSide"
                ) from None
            self.limiter.on_success(action)
            return result

        def should_retry(err: BaseException) -> bool:
            if not isinstance(err, Ec2Error):
                return False
            if err.retryable:
                return True
            return err.code == "InvalidNetworkInterfaceID.NotFound" and self._recently_created(eni_ids)

        retrying = Retrying(
            stop=stop_after_attempt(self.retry.max_attempts),
            wait=wait_random_exponential(multiplier=self.retry.base_delay, max=self.retry.max_delay),
            retry=retry_if_exception(should_retry),
            sleep=self._sleep,
            reraise=True,
            before_sleep=lambda state: log.info(
                "ec2 retry action=%s attempt=%d error=%s",
                action,
                state.attempt_number,
                getattr(state.outcome.exception(), "code", "?") if state.outcome else "?",
            ),
        )
        return retrying(attempt)

    @staticmethod
    def _translate(action: str, err: ClientError) -> Ec2Error:
        error = err.response.get("Error") or {}
        code = str(error.get("Code") or "Unknown")
        status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        detail = str(error.get("Message") or "no message").rstrip(".")
        return make_error(
            code, f"EC2 {action} failed with {code}: {detail}.", action=action, http_status=status
        )

    def _recently_created(self, eni_ids: Sequence[str]) -> bool:
        now = self._clock.now()
        return any(now - self._created_at.get(i, -1e18) <= self.retry.consistency_window for i in eni_ids)

    def _paginate(self, action: str, result_key: str, params: dict[str, Any], *, has_ids: bool) -> list[Any]:
        def fetch() -> list[Any]:
            config: dict[str, Any] = {}
            if not has_ids and action in self._page_sizes:
                config["PageSize"] = self._page_sizes[action]
            items: list[Any] = []
            for page in self._client.get_paginator(_snake(action)).paginate(
                **params, PaginationConfig=config
            ):
                items.extend(page.get(result_key) or ())
            return items

        return self._invoke(action, fetch, eni_ids=params.get("NetworkInterfaceIds", ()))

    @staticmethod
    def _describe_params(ids_key: str, ids: Sequence[str], filters: Filters | None) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if ids:
            params[ids_key] = list(ids)
        if filters:
            params["Filters"] = parse.wire_filters(filters)
        return params

    # --- describe --------------------------------------------------------------------------------
    def describe_network_interfaces(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.NetworkInterface]:
        params = self._describe_params("NetworkInterfaceIds", ids, filters)
        raw = self._paginate("DescribeNetworkInterfaces", "NetworkInterfaces", params, has_ids=bool(ids))
        return [parse.network_interface(d) for d in raw]

    def describe_subnets(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.Subnet]:
        params = self._describe_params("SubnetIds", ids, filters)
        return [
            parse.subnet(d) for d in self._paginate("DescribeSubnets", "Subnets", params, has_ids=bool(ids))
        ]

    def describe_vpcs(self, *, ids: Sequence[str] = (), filters: Filters | None = None) -> list[api.Vpc]:
        params = self._describe_params("VpcIds", ids, filters)
        return [parse.vpc(d) for d in self._paginate("DescribeVpcs", "Vpcs", params, has_ids=bool(ids))]

    def describe_route_tables(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.RouteTable]:
        params = self._describe_params("RouteTableIds", ids, filters)
        raw = self._paginate("DescribeRouteTables", "RouteTables", params, has_ids=bool(ids))
        return [parse.route_table(d) for d in raw]

    def describe_security_groups(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.SecurityGroup]:
        params = self._describe_params("GroupIds", ids, filters)
        raw = self._paginate("DescribeSecurityGroups", "SecurityGroups", params, has_ids=bool(ids))
        return [parse.security_group(d) for d in raw]

    def describe_instance_types(self, instance_types: Sequence[str] = ()) -> list[api.InstanceTypeLimits]:
        params = {"InstanceTypes": list(instance_types)} if instance_types else {}
        raw = self._paginate("DescribeInstanceTypes", "InstanceTypes", params, has_ids=bool(instance_types))
        return [parse.instance_type(d) for d in raw]

    def describe_instances(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.Instance]:
        params = self._describe_params("InstanceIds", ids, filters)
        return parse.instances(self._paginate("DescribeInstances", "Reservations", params, has_ids=bool(ids)))

    def describe_tags(self, *, filters: Filters | None = None) -> list[api.TagDescription]:
        params = self._describe_params("", (), filters)
        return [
            parse.tag_description(d) for d in self._paginate("DescribeTags", "Tags", params, has_ids=False)
        ]

    def describe_addresses(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.Address]:
        params = self._describe_params("AllocationIds", ids, filters)  # DescribeAddresses has no pages
        response = self._invoke("DescribeAddresses", lambda: self._client.describe_addresses(**params))
        return [parse.address(d) for d in response.get("Addresses") or ()]

    # --- ENI lifecycle ---------------------------------------------------------------------------
    def create_network_interface(self, request: api.CreateNetworkInterfaceRequest) -> api.NetworkInterface:
        params = parse.create_request(request)
        response = self._invoke(
            "CreateNetworkInterface", lambda: self._client.create_network_interface(**params)
        )
        eni = parse.network_interface(response["NetworkInterface"])
        self._created_at[eni.id] = self._clock.now()
        self._forget_old_creations()
        return eni

    def attach_network_interface(self, network_interface_id: str, instance_id: str, device_index: int) -> str:
        response = self._invoke(
            "AttachNetworkInterface",
            lambda: self._client.attach_network_interface(
                NetworkInterfaceId=network_interface_id, InstanceId=instance_id, DeviceIndex=device_index
            ),
            eni_ids=[network_interface_id],
        )
        return str(response["AttachmentId"])

    def set_delete_on_termination(
        self, network_interface_id: str, attachment_id: str, delete_on_termination: bool
    ) -> None:
        self._invoke(
            "ModifyNetworkInterfaceAttribute",
            lambda: self._client.modify_network_interface_attribute(
                NetworkInterfaceId=network_interface_id,
                Attachment={"AttachmentId": attachment_id, "DeleteOnTermination": delete_on_termination},
            ),
            eni_ids=[network_interface_id],
        )

    def detach_network_interface(self, attachment_id: str, *, force: bool = False) -> None:
        self._invoke(
            "DetachNetworkInterface",
            lambda: self._client.detach_network_interface(AttachmentId=attachment_id, Force=force),
        )

    def delete_network_interface(self, network_interface_id: str) -> None:
        self._invoke(
            "DeleteNetworkInterface",
            lambda: self._client.delete_network_interface(NetworkInterfaceId=network_interface_id),
        )
        self._created_at.pop(network_interface_id, None)

    # --- addresses -------------------------------------------------------------------------------
    def assign_private_ip_addresses(
        self,
        network_interface_id: str,
        *,
        secondary_private_ip_count: int | None = None,
        private_ips: Sequence[str] = (),
        ipv4_prefix_count: int | None = None,
        ipv4_prefixes: Sequence[str] = (),
    ) -> api.AssignedAddresses:
        params = parse.assign_request(
            network_interface_id, secondary_private_ip_count, private_ips, ipv4_prefix_count, ipv4_prefixes
        )
        response = self._invoke(
            "AssignPrivateIpAddresses",
            lambda: self._client.assign_private_ip_addresses(**params),
            eni_ids=[network_interface_id],
        )
        return parse.assigned(network_interface_id, response)

    def unassign_private_ip_addresses(
        self, network_interface_id: str, *, private_ips: Sequence[str] = (), ipv4_prefixes: Sequence[str] = ()
    ) -> None:
        params: dict[str, Any] = {"NetworkInterfaceId": network_interface_id}
        if private_ips:
            params["PrivateIpAddresses"] = list(private_ips)
        if ipv4_prefixes:
            params["Ipv4Prefixes"] = list(ipv4_prefixes)
        self._invoke(
            "UnassignPrivateIpAddresses", lambda: self._client.unassign_private_ip_addresses(**params)
        )

    def assign_ipv6_prefixes(self, network_interface_id: str, count: int = 1) -> tuple[str, ...]:
        response = self._invoke(
            "AssignIpv6Addresses",
            lambda: self._client.assign_ipv6_addresses(
                NetworkInterfaceId=network_interface_id, Ipv6PrefixCount=count
            ),
            eni_ids=[network_interface_id],
        )
        return tuple(str(p) for p in response.get("AssignedIpv6Prefixes") or ())

    # --- tags and elastic IPs --------------------------------------------------------------------
    def create_tags(self, resource_ids: Sequence[str], tags: api.Tags) -> None:
        self._invoke(
            "CreateTags",
            lambda: self._client.create_tags(Resources=list(resource_ids), Tags=parse.wire_tags(tags)),
            eni_ids=list(resource_ids),
        )

    def delete_tags(self, resource_ids: Sequence[str], keys: Sequence[str]) -> None:
        self._invoke(
            "DeleteTags",
            lambda: self._client.delete_tags(Resources=list(resource_ids), Tags=[{"Key": k} for k in keys]),
        )

    def associate_address(
        self, allocation_id: str, network_interface_id: str, *, private_ip: str | None = None
    ) -> str:
        params: dict[str, Any] = {"AllocationId": allocation_id, "NetworkInterfaceId": network_interface_id}
        if private_ip:
            params["PrivateIpAddress"] = private_ip
        response = self._invoke("AssociateAddress", lambda: self._client.associate_address(**params))
        return str(response.get("AssociationId", ""))

    def _forget_old_creations(self) -> None:
        horizon = self._clock.now() - self.retry.consistency_window
        if len(self._created_at) > 1024:
            self._created_at = {k: t for k, t in self._created_at.items() if t >= horizon}
