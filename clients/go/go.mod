module jobd

go 1.19
