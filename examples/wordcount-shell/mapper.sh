#!/bin/sh
# WordCount's mapper as a shell pipeline: one `word<TAB>1` line per word.
exec tr -s ' \t\r\f\v' '\n\n\n\n\n' | awk 'NF { print $0 "\t1" }'
