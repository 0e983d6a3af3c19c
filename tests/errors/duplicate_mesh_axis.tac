# expect: 3:17: error: mesh axis 'batch' is listed twice
# stage: syntax
mesh batch = 4, batch = 2
