# expect: 3:6: error: unexpected 'dim': it is a keyword and cannot be used as a name
# stage: syntax
mesh dim = 2
