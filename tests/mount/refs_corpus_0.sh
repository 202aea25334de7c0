#!/bin/sh
# refs_corpus_0.sh - half 0 of tests/mount/refs_corpus.sh (the files whose
# index is even): make check -j2 runs the two halves side by side
HPC_REFS_CORPUS_SHARD=0/2 exec bash "$(dirname "$0")/refs_corpus.sh"
