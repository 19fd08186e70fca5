#!/usr/bin/env python3
"""Set-up of a moto_server for the s3:// tests (run by tests/moto_server.h with moto's Python).

  moto_s3.py users ENDPOINT
      The first calls of a moto_server started with INITIAL_NO_AUTH_ACTION_COUNT=5 go
      unauthenticated: they create the IAM user "ggufs" with an access key and a policy allowing
      s3:* and sts:AssumeRole, and the role "ggufs-reader" (s3:*). Then, signed with the new key,
      an assumed-role session gives temporary credentials. Prints one JSON object: key, secret,
      session_key, session_secret, session_token.
  moto_s3.py upload ENDPOINT BUCKET DIR
      Creates BUCKET and uploads every file under DIR (key: its path relative to DIR), signed
      with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from the environment.
"""
import json
import os
import sys

import boto3

REGION = "us-east-1"
ALLOW_ALL_S3 = {"Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": ["s3:*", "sts:AssumeRole"],
                               "Resource": "*"}]}
TRUST_ANYONE = {"Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"},
                               "Action": "sts:AssumeRole"}]}


def users(endpoint):
    # Unauthenticated calls: moto accepts any key for them.
    iam = boto3.client("iam", endpoint_url=endpoint, region_name=REGION,
                       aws_access_key_id="setup", aws_secret_access_key="setup")
    iam.create_user(UserName="ggufs")
    key = iam.create_access_key(UserName="ggufs")["AccessKey"]
    iam.put_user_policy(UserName="ggufs", PolicyName="s3",
                        PolicyDocument=json.dumps(ALLOW_ALL_S3))
    role = iam.create_role(RoleName="ggufs-reader",
                           AssumeRolePolicyDocument=json.dumps(TRUST_ANYONE))["Role"]
    iam.put_role_policy(RoleName="ggufs-reader", PolicyName="s3",
                        PolicyDocument=json.dumps(ALLOW_ALL_S3))
    # From here on every call is authenticated.
    sts = boto3.client("sts", endpoint_url=endpoint, region_name=REGION,
                       aws_access_key_id=key["AccessKeyId"],
                       aws_secret_access_key=key["SecretAccessKey"])
    session = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="ggufs-test")["Credentials"]
    print(json.dumps({"key": key["AccessKeyId"], "secret": key["SecretAccessKey"],
                      "session_key": session["AccessKeyId"],
                      "session_secret": session["SecretAccessKey"],
                      "session_token": session["SessionToken"]}))


def upload(endpoint, bucket, root):
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION)
    s3.create_bucket(Bucket=bucket)
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            s3.upload_file(path, bucket, os.path.relpath(path, root))


if __name__ == "__main__":
    if sys.argv[1] == "users":
        users(sys.argv[2])
    else:
        upload(*sys.argv[2:5])
