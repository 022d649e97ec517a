#!/usr/bin/python3
"""WordCount's reducer (and combiner) as a Copse streaming program: records
`word<TAB>count` arrive sorted by word; one `word<TAB>total` goes out per word."""
import sys

out = sys.stdout.buffer
word, total = None, 0
for line in sys.stdin.buffer:
    key, _, value = line.rstrip(b"\n").partition(b"\t")
    if key != word:
        if word is not None:
            out.write(b"%s\t%d\n" % (word, total))
        word, total = key, 0
    total += int(value or b"1")
if word is not None:
    out.write(b"%s\t%d\n" % (word, total))
