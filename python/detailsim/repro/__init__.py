"""The reproduction machinery: the papers' claims and their grading (`claims`, `grading`, `modern`), the
reproductions (`reproduce`), the readings of the DeTail paper's open choices (`readings`), why claims fail
(`why`, `demonstrations`), the cross-checks (`crosscheck`, `live_validate`, `matrix`) and the generated doc
blocks (`reference`, `docblocks`)."""
