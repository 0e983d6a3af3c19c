# expect: 3:10: error: unexpected character '\xe2' (only ASCII is allowed outside comments and strings)
# stage: syntax
schedule “bp”
