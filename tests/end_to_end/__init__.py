"""Tests of the whole product as users meet it: the real `larvatus` command, the wheel, the docs' snippets, the code's shape."""
