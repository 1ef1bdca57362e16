"""Remote stores (s3://, gs://): their libraries, options and credentials, checked at start on launcher and workers."""
from __future__ import annotations

import argparse
import importlib
import os
import socket
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

# scheme -> (module Beam's filesystem for it needs, the extra that installs it)
LIBRARIES = {"s3": ("boto3", "larvatus[aws]"),
             "gs": ("apache_beam.io.gcp.gcsfilesystem", "larvatus[gcp]")}
# Seconds one probe of a store may take: a store that cannot be reached or that refuses
# the credentials fails the job at start, not after Beam's retries (many minutes).
PROBE_TIMEOUT = 10
PROBE_ATTEMPTS = 2
AWS_CREDENTIALS_HINT = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or give the machine "
    "an IAM role) where the job runs, launcher and workers alike, or pass "
    "--s3_access_key_id and --s3_secret_access_key")


class StoreError(ValueError):
    """A remote store that cannot be used as set up: a missing library, missing or refused
    credentials, an unreachable endpoint (not the data's fault: the job stops at start)."""


def scheme(path: str) -> Optional[str]:
    """`s3` for `s3://bucket/key`; None for a local path."""
    head, sep, _ = path.partition("://")
    return head.lower() if sep else None


def bucket_and_key(path: str) -> tuple[str, str]:
    """(`bucket`, `key/prefix`) of `s3://bucket/key/prefix`."""
    body = path.partition("://")[2]
    bucket, _, key = body.partition("/")
    return bucket, key


def where() -> str:
    """This machine and process, for messages that must say where a check failed."""
    return f"{socket.gethostname()} (pid {os.getpid()})"


# Beam's filesystem options (S3Options, HadoopFileSystemOptions, AzureOptions) -> whether
# the flag takes no value. Listed here so that `larvatus show` parses them without
# importing Beam; a test keeps the list equal to Beam's.
STORE_FLAGS = {
    "s3_access_key_id": False, "s3_secret_access_key": False, "s3_session_token": False,
    "s3_endpoint_url": False, "s3_region_name": False, "s3_api_version": False,
    "s3_verify": False, "s3_disable_ssl": True,
    "hdfs_host": False, "hdfs_port": False, "hdfs_user": False, "hdfs_full_urls": True,
    "azure_connection_string": False, "blob_service_endpoint": False,
    "azure_managed_identity_client_id": False,
}


# Store options whose values are secrets: never printed.
SECRET_FLAGS = frozenset({"s3_access_key_id", "s3_secret_access_key", "s3_session_token",
                          "azure_connection_string"})


def next_step_flags(options: "StoreOptions") -> list[str]:
    """The store options a printed next step (`larvatus show OUT ...`) needs to reach the
    output as `run` did, shell-quoted; a secret's value is never printed, only its name."""
    import shlex

    flags = []
    for name, value in options.items:
        if name in SECRET_FLAGS:
            flags.append(f"--{name} ...")
        elif STORE_FLAGS.get(name):
            if value:
                flags.append(f"--{name}")
        else:
            flags.append(f"--{name} {shlex.quote(str(value))}")
    return flags


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """Beam's filesystem options (--s3_endpoint_url, --hdfs_host, ...) on a command that
    reads a job's output (`larvatus show`, `larvatus report`)."""
    group = parser.add_argument_group(
        "remote storage", "Beam's filesystem options, as `larvatus run` takes them (see "
        "'larvatus run --help-beam'). Credentials may also come from the environment "
        "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS...).")
    for name, is_flag in STORE_FLAGS.items():
        if is_flag:
            group.add_argument(f"--{name}", action="store_true", default=None)
        else:
            group.add_argument(f"--{name}", default=None, metavar="VALUE")


def store_options_from_args(args: argparse.Namespace) -> "StoreOptions":
    """The filesystem options given on a `show` or `report` command line."""
    return StoreOptions(tuple(sorted(
        (name, getattr(args, name)) for name in STORE_FLAGS
        if getattr(args, name, None) is not None)))


def use_store(paths: Iterable[Optional[str]], options: "StoreOptions") -> None:
    """Gives Beam's FileSystems `options` and checks the remote paths' stores (StoreError if
    one is unusable), for a command that reads a job's output."""
    paths = [path for path in paths if path and scheme(path) is not None]
    if not paths:
        return
    check_stores(paths, options, side="this machine")
    from apache_beam.io.filesystems import FileSystems

    FileSystems.set_options(options.pipeline_options())


@dataclass(frozen=True)
class StoreOptions:
    """The job's filesystem options, carried inside the job to every worker.

    A worker that unpickles them (any DoFn or sink holding them) installs them in Beam's
    FileSystems unless its harness already did: a bare SDK worker pool never gives the
    file layer the job's options, and S3 then cannot even be listed.
    """

    items: tuple[tuple[str, Any], ...] = field(default=(), repr=False)   # may hold secrets

    @classmethod
    def of(cls, pipeline_options) -> "StoreOptions":
        """The filesystem options set in `pipeline_options` (a PipelineOptions)."""
        names = frozenset(STORE_FLAGS)
        given = pipeline_options.get_all_options(drop_default=True, retain_unknown_options=False)
        return cls(tuple(sorted((k, v) for k, v in given.items() if k in names and v is not None)))

    def pipeline_options(self):
        from apache_beam.options.pipeline_options import PipelineOptions

        return PipelineOptions.from_dictionary(dict(self.items))

    def install(self) -> None:
        """Gives Beam's FileSystems these options in this process, unless it has some."""
        from apache_beam.io.filesystems import FileSystems
        from apache_beam.options.value_provider import RuntimeValueProvider

        if FileSystems._pipeline_options is None and RuntimeValueProvider.runtime_options is None:   # pylint: disable=protected-access
            FileSystems.set_options(self.pipeline_options())

    def __reduce__(self):
        return (_unpickled, (self.items,))


def _unpickled(items: tuple) -> StoreOptions:
    """StoreOptions as a worker receives them: installed in its file layer at once."""
    options = StoreOptions(items)
    options.install()
    return options


def check_stores(paths: Iterable[Optional[str]], options: StoreOptions, side: str,
                 writable: Iterable[str] = ()) -> None:
    """Raises StoreError unless every remote path's store has its library, can be reached
    and lets these credentials list the path (and write under the `writable` ones).

    Each probe is bounded (PROBE_TIMEOUT seconds, PROBE_ATTEMPTS tries), so a missing
    credential fails now with a message naming the store and this machine.
    """
    writable = set(writable)
    seen = set()
    for path in paths:
        if not path or scheme(path) is None or path in seen:
            continue
        seen.add(path)
        _check_library(path, side)
        if scheme(path) == "s3":
            _probe_s3(path, dict(options.items), side, write=path in writable)


def _check_library(path: str, side: str) -> None:
    name = scheme(path)
    if name not in LIBRARIES:
        return
    module, extra = LIBRARIES[name]
    try:
        importlib.import_module(module)
    except ImportError:
        needed = "boto3" if name == "s3" else "Beam's GCS filesystem (apache-beam[gcp])"
        raise StoreError(
            f"on {side} {where()}: {path} needs {needed}, which is not installed: pip "
            f"install '{extra}' (on the workers too: the same --setup_file extras or "
            f"container image)") from None


def s3_client(options: dict):
    """A boto3 S3 client with Beam's S3 options, fast to fail (bounded timeouts and retries)."""
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=PROBE_TIMEOUT, read_timeout=PROBE_TIMEOUT,
                    retries={"max_attempts": PROBE_ATTEMPTS, "mode": "standard"})
    return boto3.session.Session().client(
        "s3", region_name=options.get("s3_region_name"),
        api_version=options.get("s3_api_version"),
        use_ssl=not options.get("s3_disable_ssl", False), verify=options.get("s3_verify"),
        endpoint_url=options.get("s3_endpoint_url"),
        aws_access_key_id=options.get("s3_access_key_id"),
        aws_secret_access_key=options.get("s3_secret_access_key"),
        aws_session_token=options.get("s3_session_token"), config=config)


def _probe_s3(path: str, options: dict, side: str, write: bool) -> None:
    from botocore.exceptions import (
        BotoCoreError, ClientError, NoCredentialsError, PartialCredentialsError,
    )

    bucket, key = bucket_and_key(path)
    endpoint = options.get("s3_endpoint_url") or "the AWS endpoint"
    store = f"s3://{bucket} at {endpoint}"
    prefix = key.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
    step = "listing"
    try:
        client = s3_client(options)
        client.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=1)
        if write:
            step = "writing under"
            probe = prefix.rstrip("/") + "/" if prefix else ""
            probe += f".larvatus-write-check-{uuid.uuid4().hex[:12]}"
            client.put_object(Bucket=bucket, Key=probe, Body=b"")
            client.delete_object(Bucket=bucket, Key=probe)
    except (NoCredentialsError, PartialCredentialsError):
        raise StoreError(f"on {side} {where()}: no AWS credentials for {store}: "
                         f"{AWS_CREDENTIALS_HINT}") from None
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "?")
        raise StoreError(f"on {side} {where()}: {store} refused {step} {path} ({code}: "
                         f"{_said(error)}); check the bucket name and that these "
                         f"credentials may {'read' if step == 'listing' else 'write'} it"
                         ) from None
    except BotoCoreError as error:
        raise StoreError(f"on {side} {where()}: cannot reach {store} ({type(error).__name__}: "
                         f"{str(error)[:200]}); check --s3_endpoint_url, --s3_region_name "
                         f"and the network") from None


def _said(error) -> str:
    return str(error.response.get("Error", {}).get("Message", ""))[:200]
