"""Loops with `for ... in range`, `break`, `continue`, `else:` and early returns."""

from autobatch import Context

ctx = Context()


@ctx.batch
def smallest_factor(n):
    # a search loop that returns from inside
    for d in range(2, n):
        if d * d > n:
            break
        if n % d == 0:
            return d
    return n


@ctx.batch
def count_primes_below(n):
    count = 0
    for k in range(2, n):
        if k > 2 and k % 2 == 0:
            continue  # even numbers above 2 are not prime
        is_prime = True
        d = 3
        while d * d <= k:
            if k % d == 0:
                is_prime = False
                break
            d += 2
        if is_prime:
            count += 1
    return count


@ctx.batch
def first_multiple_of_seven(n, limit):
    # the smallest k below `limit` with k * n a multiple of 7, else -1
    for k in range(1, limit):
        if k * n % 7 == 0:
            found = k
            break
    else:
        found = -1
    return found
