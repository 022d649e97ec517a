#!/usr/bin/python3
"""WordCount's mapper as a Copse streaming program: a line in, `word<TAB>1` out
for every word (a maximal run of non-whitespace bytes, as the shipped
wordcount program counts them)."""
import sys

out = sys.stdout.buffer
for line in sys.stdin.buffer:
    for word in line.split():
        out.write(word + b"\t1\n")
