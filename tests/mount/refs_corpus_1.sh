#!/bin/sh
# refs_corpus_1.sh - half 1 of tests/mount/refs_corpus.sh (the files whose
# index is odd): make check -j2 runs the two halves side by side
HPC_REFS_CORPUS_SHARD=1/2 exec bash "$(dirname "$0")/refs_corpus.sh"
