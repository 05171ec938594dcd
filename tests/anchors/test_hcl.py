"""Terraform/HCL anchors resolve to their blocks, never to a word: `main.tf::eks` once resolved to a
`tags = ["eks"]` line 200 lines above `module "eks"`."""
from __future__ import annotations

import pytest

from stele.anchors.symbols import by_words, find

MAIN_TF = '''\
locals {
  cluster_name = "prod"
  tags = {
    Team = "platform"
  }
}

module "vpc" {
  source = "terraform-aws-modules/vpc/aws"
  tags   = ["eks", "vpc"]   # } a brace in a comment
}

resource "aws_security_group" "eks" {
  description = "Allow ${local.cluster_name} { nodes }"
  user_data = <<-EOT
    #!/bin/bash
    echo "}"
  EOT
}

data "aws_caller_identity" "current" {}

variable "region" {
  default = "eu-west-1"
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"
}
'''


@pytest.mark.parametrize("symbol,lines", [
    ("module.eks", (27, 30)),
    ("eks", (27, 30)),  # a bare name: the module of that name before a resource labelled so
    ("resource.aws_security_group.eks", (13, 19)),
    ("aws_security_group.eks", (13, 19)),  # Terraform's own address of a resource
    ("data.aws_caller_identity.current", (21, 21)),
    ("variable.region", (23, 25)),
    ("var.region", (23, 25)),
    ("local.cluster_name", (2, 2)),
    ("local.tags", (3, 5)),
    ("module.vpc", (8, 11)),
])
def test_block_addresses_resolve_to_the_block(symbol, lines):
    assert find(MAIN_TF, symbol, "infra/main.tf") == lines


@pytest.mark.parametrize("symbol", ["module.nope", "platform", "resource.aws_security_group", "tags"])
def test_no_block_is_no_match_never_a_word(symbol):
    assert find(MAIN_TF, symbol, "main.tf") is None


def test_only_files_without_a_definition_rule_resolve_by_words():
    assert by_words("docs/runbook.md") and by_words("deploy.yaml")
    assert not by_words("main.tf") and not by_words("src/a.py")
