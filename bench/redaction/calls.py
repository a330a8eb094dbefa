"""Hand-written calls for the redactor, in free phrasing (not the templates of corpus.py), written
after the rules and scored as they came: they say how far the templated corpus's figures carry.

Markup: ``{E:TYPE:text}`` is personal data of that type, ``{K:kind:text}`` a look-alike that must
survive. The check digits are real (cards pass Luhn, the CBU, CUIT, IBAN, NIF, RUT its own)."""

from __future__ import annotations

import re

from .corpus import Call, Span

CALLS = {
    "es": [
        ("Marta Quiroga", """AGENTE: Buenos días, le atiende {K:agent_name:Marta} de Telco Sur. ¿En qué puedo ayudarle?
CLIENTE: Hola Marta, mire, me cobraron dos veces la factura de octubre, son {K:amount:18.450 pesos} cada una.
AGENTE: Lamento la molestia. ¿Me indica su número de documento para ubicar la cuenta?
CLIENTE: Sí, {E:AR_DNI:31.420.102}.
AGENTE: Gracias, señor {E:PERSON:Benítez}. Veo los dos débitos del {K:date:5 de noviembre}.
AGENTE: Le abro un reclamo, el número es {K:case:4417-22}, y la devolución se acredita en {K:duration:cinco días hábiles}.
CLIENTE: ¿Me lo pueden devolver al CBU {E:AR_CBU:0170099220000067797370}? Es de otro banco.
AGENTE: Sí, lo anoto. ¿Un mail para mandarle la constancia?
CLIENTE: {E:EMAIL_ADDRESS:jbenitez72@gmail.com}, y si no me llaman al {E:PHONE_NUMBER:11 4892-3310}.
AGENTE: Perfecto. Le resumo: reclamo {K:case:4417-22}, devolución en cinco días hábiles. Gracias por llamar.
"""),
        ("Lucas Ferreyra", """AGENTE: Cobranzas, habla {K:agent_name:Lucas}, ¿con quién tengo el gusto?
CLIENTE: Con {E:PERSON:Gabriela Suárez}, la titular.
AGENTE: Señora {E:PERSON:Suárez}, le llamo por la deuda de {K:amount:$ 96.300} con un atraso de {K:duration:45 días}.
CLIENTE: Sí, ya sé, quiero pagar con tarjeta. Es la {E:CREDIT_CARD:4509 9535 6623 3704}.
AGENTE: ¿La fecha de vencimiento?
CLIENTE: Vence en {E:CARD_EXPIRY:11/28}.
AGENTE: ¿Y el código de seguridad, los tres números de atrás?
CLIENTE: {E:CARD_SECURITY_CODE:123}.
AGENTE: Listo, se debitan {K:amount:96.300 pesos} en {K:amount:3 cuotas} con un recargo del {K:percentage:8%}.
CLIENTE: ¿Me manda el comprobante? Mi CUIL es {E:AR_CUIT:27-28456123-1} para la factura.
AGENTE: Sí, se lo mando hoy antes de las {K:time:18:00}. El número de operación es {K:operation:88231}.
"""),
        ("Inés Paredes", """AGENTE: Banco del Sur, buenas tardes, le atiende {K:agent_name:Inés}.
CLIENTE: Buenas tardes. Me llamo {E:PERSON:Pablo Herrera}, vivo en {E:LOCATION:Sevilla} y tengo una cuenta con ustedes.
AGENTE: ¿Me confirma su DNI con la letra, por favor?
CLIENTE: Claro, {E:ES_NIF:12345678Z}.
AGENTE: Gracias. ¿En qué le puedo ayudar?
CLIENTE: Quiero que la transferencia vaya a mi cuenta {E:IBAN_CODE:ES91 2100 0418 4502 0005 1332}, no a la vieja.
AGENTE: Entendido. La orden {K:order:556-2210983} queda modificada desde el {K:date:20/11/2026}.
CLIENTE: ¿Y me pueden llamar al {E:PHONE_NUMBER:612 345 678} si hay algún problema?
AGENTE: Sí. Su gestión es la {K:case:2026-4417}, tarda unas {K:duration:48 horas}.
"""),
        ("Marta Quiroga", """AGENTE: Soporte, le atiende {K:agent_name:Marta}.
CLIENTE: Hola, soy {E:PERSON:Rocío Giménez}, escribo desde {E:LOCATION:Santiago} de Chile.
AGENTE: Hola {E:PERSON:Rocío}, ¿me dice su RUT?
CLIENTE: {E:CL_RUT:12.345.678-5}.
AGENTE: Gracias. Veo que el plan sube un {K:percentage:12,5 por ciento} desde {K:date:enero}.
CLIENTE: Sí, por eso llamo. Y también mi hermana, {E:PERSON:Carolina Giménez}, tiene el mismo problema.
AGENTE: Le dejo el ticket {K:ticket:#558201} y la llamamos mañana a las {K:time:10:30}.
"""),
        ("Lucas Ferreyra", """AGENTE: buenas tardes le habla {K:agent_name:Lucas} en qué lo ayudo
CLIENTE: hola sí quería pagar la factura con la tarjeta {E:CREDIT_CARD:5425 2334 3010 9903} que vence el {E:CARD_EXPIRY:04/27}
AGENTE: perfecto me dice el código de seguridad
CLIENTE: {E:CARD_SECURITY_CODE:4471}
AGENTE: listo son {K:amount:23.900 pesos} el número de reclamo es {K:case:778120}
CLIENTE: mi mail es {E:EMAIL_ADDRESS:pablo punto ortiz arroba gmail punto com}
"""),
        ("Inés Paredes", """AGENTE: Atención al cliente, habla {K:agent_name:Inés}.
CLIENTE: Hola, llamo de {E:LOCATION:México}, mi nombre es {E:PERSON:Alejandro Vázquez}.
AGENTE: Mucho gusto. ¿Me da su CURP para ubicarlo?
CLIENTE: Es {E:MX_CURP:HEGG560427MVZRRL04}.
AGENTE: Gracias. Su pedido {K:order:4417223398} salió de {E:LOCATION:Monterrey} el {K:date:3 de diciembre}.
CLIENTE: Mi celular es el {E:PHONE_NUMBER:+52 55 1234 5678} por si el repartidor se pierde.
AGENTE: Anotado. Llega en {K:duration:2 días} y el envío cuesta {K:amount:150 pesos}.
"""),
        ("Marta Quiroga", """AGENTE: Buenos días, le atiende {K:agent_name:Marta}. ¿En qué le ayudo?
CLIENTE: Llamo por la tarjeta de mi hija. Mi hija {E:PERSON:Valentina Pérez} llamará después, pero pago yo.
AGENTE: Perfecto. ¿Me dicta el número?
CLIENTE: Es {E:CREDIT_CARD:4539\u00a05787\u00a06362\u00a01486}.
AGENTE: ¿Y la otra tarjeta, la de su hermano?
CLIENTE: La de mi hermano {E:PERSON:Tomás} es {E:CREDIT_CARD:4111 1111}
CLIENTE: {E:CREDIT_CARD:1111 1111}, y el pedido es el {K:order:4417.2290}.
AGENTE: Gracias, el débito de {K:amount:$ 12.500} queda para el {K:date:3 de diciembre}.
"""),
    ],
    "en": [
        ("Karen Doyle", """AGENT: Thank you for calling First Meridian, this is {K:agent_name:Karen}. Who am I speaking with?
CUSTOMER: Hi Karen, this is {E:PERSON:Daniel Thompson}. I lost my card yesterday.
AGENT: I'm sorry to hear that, Mr. {E:PERSON:Thompson}. Can you read me the card number?
CUSTOMER: Sure, it's {E:CREDIT_CARD:4111-1111-1111-1111}.
AGENT: And to verify, the last four of your social, or the full number if you have it?
CUSTOMER: The whole thing is {E:US_SSN:123-45-6789}.
AGENT: Thanks. I see a charge of {K:amount:$249.99} from {K:date:November 28, 2026} that you didn't make?
CUSTOMER: Right, I didn't make that one.
AGENT: I've opened a dispute, the case number is {K:case:4417-22}. The new card arrives in {K:duration:5 business days}.
CUSTOMER: Can you text me at {E:PHONE_NUMBER:(312) 555-0147} when it ships?
AGENT: Of course. And I'll email the letter to {E:EMAIL_ADDRESS:dthompson@outlook.com}.
"""),
        ("Mark Ellison", """AGENT: Collections department, my name is {K:agent_name:Mark}.
CUSTOMER: Yeah, hi, I'm {E:PERSON:Rebecca Nelson}, I got a letter about a balance of {K:amount:1,240 dollars}.
AGENT: That's right, Ms. {E:PERSON:Nelson}, it's {K:duration:60 days} past due. Would you like to pay today?
CUSTOMER: I can pay half with my Amex, {E:CREDIT_CARD:3782 822463 10005}.
AGENT: What's the expiration date on that card?
CUSTOMER: It expires {E:CARD_EXPIRY:09/2029}.
AGENT: And the security code on the back?
CUSTOMER: It's {E:CARD_SECURITY_CODE:7384}.
AGENT: Thank you. That's {K:amount:$620.00} today and the rest in {K:amount:2 installments}, at {K:percentage:0%} interest.
AGENT: Your confirmation number is {K:order:88231907}. I'll call you back at {K:time:3:30 pm} on Friday.
"""),
        ("Nina Brooks", """AGENT: Hello, you've reached support, this is {K:agent_name:Nina}.
CUSTOMER: Hi, my name is {E:PERSON:Kevin Scott}, I'm calling from {E:LOCATION:Denver}.
AGENT: Hi {E:PERSON:Kevin}. What's the best number to reach you?
CUSTOMER: {E:PHONE_NUMBER:720-555-0198}, or my email, {E:EMAIL_ADDRESS:kevin dot scott at gmail dot com}.
AGENT: Got it. Your order {K:order:4417223398} was delayed, the ticket is {K:ticket:#558201}.
CUSTOMER: I moved to {E:LOCATION:Chicago} last month, maybe that's why.
AGENT: Could be. I've updated it; it should ship within {K:duration:48 hours}, and you'll get a {K:percentage:15%} credit.
CUSTOMER: Also, my refund should go to my German account, {E:IBAN_CODE:DE89 3704 0044 0532 0130 00}.
"""),
        ("Karen Doyle", """AGENT: Thanks for calling, this is {K:agent_name:Karen}. How can I help?
CUSTOMER: Hi, I'm calling for my daughter. My daughter {E:PERSON:Emily} will call back later.
AGENT: Sure. Which card do you want to use?
CUSTOMER: It's {E:CREDIT_CARD:4539\u200b5787\u200b6362\u200b1486}.
AGENT: And the one your brother used?
CUSTOMER: My brother {E:PERSON:Tom Becker} used {E:CREDIT_CARD:4111.1111.1111.1111}, order {K:order:5521.8890}.
AGENT: Got it, {K:amount:$45.20} will be charged on {K:date:December 3}.
"""),
    ],
}

_MARK = re.compile(r"\{([EK]):(\w+):([^}]*)\}")


def calls(language: str) -> list[Call]:
    """The hand-written calls of `language`, as labelled Calls."""
    result = []
    for number, (agent, marked) in enumerate(CALLS[language], 1):
        call = Call(f"{language}-hand-{number}", language, agent)
        text, position = "", 0
        for match in _MARK.finditer(marked):
            text += marked[position : match.start()]
            tag, kind, value = match.groups()
            span = Span(kind, len(text), len(text) + len(value), value)
            (call.entities if tag == "E" else call.lookalikes).append(span)
            text += value
            position = match.end()
        call.text = text + marked[position:]
        result.append(call)
    return result
