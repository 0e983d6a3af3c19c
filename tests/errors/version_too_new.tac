# expect: 3:9: error: this file needs tactic-language version 2, but this carve reads versions up to 1; upgrade carve
# stage: syntax
version 2
mesh batch = 4
