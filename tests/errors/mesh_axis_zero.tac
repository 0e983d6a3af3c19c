# expect: 3:25: error: mesh axis 'model' must have a size of at least 1
# stage: syntax
mesh batch = 4, model = 0
