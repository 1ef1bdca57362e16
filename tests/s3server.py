"""A real S3 server on the loopback for tests: moto's server mode in a subprocess, on a free port.

Credentials are handed to the processes under test by environment variables only
(`S3Server.env`); `no_credentials_env` gives an environment where botocore finds none
(no variables, no shared files, no instance metadata lookup), so nothing leaves the
loopback.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

BUCKET = "larvatus-test"
ACCESS_KEY = "larvatus-test-access-key"
SECRET_KEY = "larvatus-test-secret-key"
START_TIMEOUT = 60
AWS_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE",
                 "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                 "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_EC2_METADATA_DISABLED",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def no_credentials_env(base: Optional[dict] = None, **extra) -> dict:
    """`base` (default os.environ) without AWS credentials or config: botocore finds none."""
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in AWS_VARIABLES}
    env.update(AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull,
               AWS_EC2_METADATA_DISABLED="true", AWS_DEFAULT_REGION="us-east-1")
    env.update(extra)
    return env


class S3Server:
    """moto's S3 server on 127.0.0.1:PORT, in its own process group; with `check_keys`,
    one that refuses every access key (no IAM users)."""

    def __init__(self, log: Path, check_keys: bool = False):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._log = open(log, "w")
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            # check_keys: moto checks every request's key against its IAM users (none)
            env=no_credentials_env(**({"INITIAL_NO_AUTH_ACTION_COUNT": "0"} if check_keys
                                      else {})),
            start_new_session=True)
        self._wait()

    def _wait(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"moto's S3 server did not start:\n{self.log.read_text()[-2000:]}")

    def env(self, base: Optional[dict] = None, **extra) -> dict:
        """An environment whose AWS credentials this server accepts."""
        return no_credentials_env(base, AWS_ACCESS_KEY_ID=ACCESS_KEY,
                                  AWS_SECRET_ACCESS_KEY=SECRET_KEY, **extra)

    def client(self):
        import boto3

        return boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint, region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)

    def put(self, key: str, data: bytes, bucket: str = BUCKET) -> str:
        self.client().put_object(Bucket=bucket, Key=key, Body=data)
        return f"s3://{bucket}/{key}"

    def keys(self, prefix: str = "", bucket: str = BUCKET) -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def download(self, prefix: str, target: Path, bucket: str = BUCKET) -> Path:
        """Every object under `prefix` into `target`, keeping the rest of its key as its path."""
        for key in self.keys(prefix, bucket):
            local = target / key[len(prefix):].lstrip("/")
            local.parent.mkdir(parents=True, exist_ok=True)
            self.client().download_file(bucket, key, str(local))
        return target

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self._log.close()
