#!/bin/sh
# WordCount's reducer as a shell pipeline: input sorted by word; sums each word's counts.
exec awk -F '\t' '
  $1 != word { if (NR > 1) print word "\t" total; word = $1; total = 0 }
  { total += ($2 == "" ? 1 : $2) }
  END { if (NR > 0) print word "\t" total }'
